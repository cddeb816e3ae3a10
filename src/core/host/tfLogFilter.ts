/**
 * TensorFlow's native library writes INFO lines to stderr when it loads (oneDNN, CPU features,
 * the absl pre-initialisation warning), in every command that starts an engine on the native
 * backend. They say nothing about the run and bury what does, so the CLI's engines pass their
 * stderr through this filter: informational TensorFlow lines go, warnings and errors (W, E, F
 * levels) and everything else stay. TF_CPP_MIN_LOG_LEVEL=2 (models/backend.ts) silences them in
 * libtensorflow 2.9, which `npm install` downloads; TensorFlow builds with absl logging print
 * them before reading it, hence this filter too. Tests: test/core/host/tfLogFilter.test.ts.
 */

/** Lines TensorFlow prints at INFO level while it loads, in both of its log formats. */
const TF_INFO = [
  // absl: `I0000 00:00:1796172793.590594     700 port.cc:153] oneDNN custom operations are on...`
  /^I\d{4} \d\d:\d\d:[\d.]+ +\d+ [\w.]+\.cc:\d+\] /,
  // tsl / TF 2.9: `2026-12-02 00:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:193] ...`
  /^\d{4}-\d\d-\d\d \d\d:\d\d:[\d.]+: I [\w/.]+\.cc:\d+\] /,
  /^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$/,
  // The second line of the CPU-feature notice.
  /^To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags\.$/,
];

export function isTensorFlowInfoLine(line: string): boolean {
  return TF_INFO.some((re) => re.test(line));
}

/**
 * A line-buffered pass-through: `write(chunk)` forwards every whole line that is not a
 * TensorFlow INFO line to `sink`; `end()` forwards what is left of a last unterminated line.
 */
export function tfLogFilter(sink: (text: string) => void): { write(chunk: string): void; end(): void } {
  let pending = '';
  return {
    write(chunk) {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      const kept = lines.filter((l) => !isTensorFlowInfoLine(l));
      if (kept.length) sink(`${kept.join('\n')}\n`);
    },
    end() {
      if (pending && !isTensorFlowInfoLine(pending)) sink(pending);
      pending = '';
    },
  };
}
