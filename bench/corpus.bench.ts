/**
 * `corpus`: speed of indexing a retrieval corpus file into an FTS5 index file
 * (src/core/data/corpusIndex.ts), the step a run takes once per corpus before searching it.
 * The corpus is synthetic and written outside the timed region: FlashRAG-style JSONL
 * `{id, contents: "\"Title\"\ntext"}` whose passages are 100 words drawn from a Zipf-like
 * vocabulary of 50k words, the shape of the DPR / FlashRAG Wikipedia dump (21M passages of 100
 * words). Also timed alone: streaming and parsing the file without indexing (the reader's share).
 * Headline: passages_per_s of the whole build (goal >= 50k/s), passages_per_cpu_s (the same per
 * second of the build's CPU time: the unloaded figure on a shared machine), parse_only_per_s,
 * mb_per_s, index bytes per passage, query_ms (median top-k query of frequent words on the built
 * index), query_rare_ms (a question of rarer words), query_repeat_ms (a repeated search, from the
 * index's cache) and the load average when the build started.
 * Run: `npm run bench -- corpus` (CORPUS_BENCH_PASSAGES=N to change the size; default 200k).
 */
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng } from '../src/core/data/prng';
import { corpusIndexPath, corpusProgressLine, openCorpusIndex, streamPassages } from '../src/core/data/corpusIndex';
import { fileSha256 } from '../src/core/data/datasetTasks';
import { headline, median } from './lib';

const PASSAGES = Number(process.env.CORPUS_BENCH_PASSAGES ?? 200_000);
const WORDS = 100;
const VOCAB = 50_000;

async function writeCorpus(path: string): Promise<void> {
  const rng = createRng('corpus-bench');
  const syll = ['ka', 'lo', 'mi', 'ra', 'zen', 'tor', 'vel', 'qui', 'dar', 'sol', 'bri', 'nox', 'pel', 'mar', 'tis', 'gor', 'fen', 'ul', 'ash', 'rin'];
  const vocab = Array.from({ length: VOCAB }, (_, i) => {
    let s = '';
    for (let n = i + 1; n > 0; n = Math.floor(n / syll.length)) s += syll[n % syll.length];
    return s;
  });
  // Zipf-like: index = floor(VOCAB ^ u) - 1 puts most draws on the frequent words.
  const word = (): string => vocab[Math.min(VOCAB - 1, Math.floor(Math.pow(VOCAB, rng.next())) - 1)];
  const out = createWriteStream(path);
  for (let i = 0; i < PASSAGES; i++) {
    const title = `${word()} ${word()}`;
    const text = Array.from({ length: WORDS }, word).join(' ');
    if (!out.write(JSON.stringify({ id: String(i), contents: `"${title}"\n${text}` }) + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(r));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-corpus-bench-'));
  try {
    const file = join(dir, 'wiki.jsonl');
    await writeCorpus(file);
    const mb = statSync(file).size / 1e6;
    console.log(`corpus: ${PASSAGES} passages of ${WORDS} words, ${mb.toFixed(1)} MB`);

    let t0 = performance.now();
    let parsed = 0;
    streamPassages(file, () => void parsed++);
    const parseS = (performance.now() - t0) / 1000;
    console.log(`parse only: ${parsed} passages in ${parseS.toFixed(2)} s`);

    const indexDir = join(dir, 'idx');
    const load0 = loadavg()[0];
    t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const idx = openCorpusIndex(file, { dir: indexDir, onProgress: (p) => console.log(`  ${corpusProgressLine(p)}`) });
    const buildS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const buildCpuS = (cpu.user + cpu.system) / 1e6;
    const bytes = statSync(corpusIndexPath(indexDir, fileSha256(file))).size;
    console.log(`build (hash + parse + index + rename): ${buildS.toFixed(2)} s, ${buildCpuS.toFixed(2)} s of CPU; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`);
    // Query time is linear in the passages the query's words occur in: FTS5 scores every match
    // (no WAND / MaxScore skipping). Worst case: frequent words of the Zipf vocabulary (each in
    // 14-88% of the passages); a question of rarer words (in 0-7%) is the common case.
    // Each round asks for a different k, so no search is answered from the index's cache (the
    // work is the same: every match is scored whatever the k); query_repeat_ms is a cached repeat.
    const timeQueries = (queries: string[], round = (r: number) => 5 + r): number => {
      const times: number[] = [];
      for (let r = 0; r < 10; r++) {
        for (const q of queries) {
          const tq = performance.now();
          idx.search(q, round(r));
          times.push(performance.now() - tq);
        }
      }
      return median(times);
    };
    const frequent = ['kalo mira zen', 'tor vel qui dar sol', 'bri nox pel', 'mar tis gor fen ul'];
    const queryMs = timeQueries(frequent);
    const queryRareMs = timeQueries(['which torvel river solbri', 'where was kalozen born']);
    const queryRepeatMs = timeQueries(frequent, () => 5);
    idx.close();
    headline('corpus', {
      passages: PASSAGES,
      passages_per_s: PASSAGES / buildS,
      // Passages per second of the build's own CPU time: what an unloaded core gives (the machines
      // are shared: wall time swings 3x with the load, CPU time less).
      passages_per_cpu_s: PASSAGES / buildCpuS,
      parse_only_per_s: parsed / parseS,
      mb_per_s: mb / buildS,
      index_bytes_per_passage: bytes / PASSAGES,
      query_ms: queryMs,
      query_rare_ms: queryRareMs,
      query_repeat_ms: queryRepeatMs,
      load_avg: load0,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
