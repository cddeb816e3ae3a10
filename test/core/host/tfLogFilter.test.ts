/**
 * TensorFlow's start-up INFO lines are dropped from the CLI's engine stderr (issue 30, point 11),
 * and nothing else is: warnings, errors, the lab's own lines and a line split across chunks.
 * The lines are TensorFlow's own, as printed by TF 2.21 (absl) and by libtensorflow 2.9 (tsl).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { isTensorFlowInfoLine, tfLogFilter } from '../../../src/core/host/tfLogFilter';

const BANNER = [
  'WARNING: All log messages before absl::InitializeLog() is called are written to STDERR',
  'I0000 00:00:1796172793.590594     700 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.',
  'I0000 00:00:1796172793.680741     700 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.',
  'To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.',
  '2026-12-02 00:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in performance-critical operations:  AVX2 FMA',
];
const KEPT = [
  '2026-12-02 00:00:00.123456: W tensorflow/core/framework/cpu_allocator_impl.cc:83] Allocation of 1073741824 exceeds 10% of free system memory.',
  'E0000 00:00:1796172793.680741     700 some_op.cc:12] an error TensorFlow reports',
  'engine: run 3 failed: model config: field "dModel" must be at least 8',
  "I think this line is the lab's own",
];

describe('TensorFlow INFO lines', () => {
  it('are recognised in both log formats; warnings, errors and other lines are not', () => {
    for (const l of BANNER) expect(isTensorFlowInfoLine(l), l).toBe(true);
    for (const l of KEPT) expect(isTensorFlowInfoLine(l), l).toBe(false);
  });

  it('are dropped from a stream cut at any place, the rest passed on whole and in order', () => {
    const text = [BANNER[0], KEPT[0], BANNER[1], BANNER[2], BANNER[3], KEPT[2], BANNER[4], KEPT[3]].join('\n') + '\n' + 'no newline at the end';
    for (const cut of [1, 7, 50, 333]) {
      let got = '';
      const f = tfLogFilter((t) => (got += t));
      for (let i = 0; i < text.length; i += cut) f.write(text.slice(i, i + cut));
      f.end();
      expect(got).toBe(`${KEPT[0]}\n${KEPT[2]}\n${KEPT[3]}\nno newline at the end`);
    }
  });

  it("reach the CLI's sink filtered when an engine prints them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-tflog-'));
    const entry = join(dir, 'fakeEngine.mjs');
    writeFileSync(entry, `process.stderr.write(${JSON.stringify([...BANNER, KEPT[0], KEPT[2]].join('\n') + '\n')}); process.exit(0);\n`);
    let got = '';
    const engine = new NodeForkLauncher({ entry, stdio: 'filter', stderrSink: (t) => (got += t) }).launch({
      dbPath: join(dir, 'x.db'),
      runId: 1,
      mode: 'start',
    });
    await new Promise<void>((done) => engine.onExit(() => done()));
    await expect.poll(() => got).toBe(`${KEPT[0]}\n${KEPT[2]}\n`);
  });
});
