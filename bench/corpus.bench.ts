/**
 * `corpus`: speed of indexing a retrieval corpus file into an FTS5 index file
 * (src/core/data/corpusIndex.ts), the step a run takes once per corpus before searching it.
 * The corpus is synthetic and written outside the timed region: FlashRAG-style JSONL
 * `{id, contents: "\"Title\"\ntext"}` whose passages are 100 words drawn from a Zipf-like
 * vocabulary of 50k words, the shape of the DPR / FlashRAG Wikipedia dump (21M passages of 100
 * words). The two readers (src/core/data/corpusReader.ts: `worker`, the default, parses in a worker
 * thread while the main thread inserts; `inline` parses on the main thread) build side by side,
 * alternating, CORPUS_BENCH_ROUNDS times each (default 2), so a change of load hits both alike;
 * the file's hash (the index's key) is timed once on its own. Also timed alone: reading and
 * parsing the file without indexing, on the main thread and in the worker.
 * Headline: passages_per_s (hash + the median worker build: the figure of the goal, >= 50k/s),
 * passages_per_cpu_s (per second of the build's CPU time, every thread: the unloaded figure on a
 * shared machine), inline_passages_per_s and worker_vs_inline (the median of the rounds' wall-time
 * ratios), main_thread_cpu_inline_vs_worker (the inserting thread's CPU time, inline over worker:
 * the worker's wall-time gain where a second core is free), parse_share (the inline parse's CPU
 * over the inline build's), hash_s, parse_only_per_s,
 * worker_read_per_s, mb_per_s, index bytes per passage, query_ms (median top-k search() of
 * frequent words on the built index: the pruned top-k of corpusTopK.ts where it proves its answer,
 * else the plain FTS5 query), query_rare_ms (a question of rarer words), query_question_ms (a rare,
 * a mid and a frequent word), each beside its *_plain_ms (the plain query alone) and speedups
 * (plain over search()), query_repeat_ms (a repeated search, from the index's cache) and the load
 * average when the builds started and ended.
 * Run: `npm run bench -- corpus` (CORPUS_BENCH_PASSAGES=N to change the size; default 200k).
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng } from '../src/core/data/prng';
import { corpusIndexPath, corpusProgressLine, openCorpusIndex, streamPassages, type CorpusIndex } from '../src/core/data/corpusIndex';
import { CORPUS_READER_NAMES, readPassageBatches, type CorpusReaderName } from '../src/core/data/corpusReader';
import { fileSha256 } from '../src/core/data/datasetTasks';
import { headline, median } from './lib';
import { syllableVocabulary } from '../test/core/data/syllableVocabulary';

const PASSAGES = Number(process.env.CORPUS_BENCH_PASSAGES ?? 200_000);
const ROUNDS = Number(process.env.CORPUS_BENCH_ROUNDS ?? 2);
const WORDS = 100;
const VOCAB = 50_000;

/** The vocabulary, most frequent first. */
const vocab = syllableVocabulary(VOCAB);

async function writeCorpus(path: string): Promise<void> {
  const rng = createRng('corpus-bench');
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
    let cpu0 = process.cpuUsage();
    let parsed = 0;
    streamPassages(file, () => void parsed++);
    const parseS = (performance.now() - t0) / 1000;
    const parseCpuS = cpuSince(cpu0);
    console.log(`parse only (main thread): ${parsed} passages in ${parseS.toFixed(2)} s, ${parseCpuS.toFixed(2)} s of CPU`);
    t0 = performance.now();
    let workerRead = 0;
    readPassageBatches(file, (b) => void (workerRead += b.ids.length), 'worker');
    const workerReadS = (performance.now() - t0) / 1000;
    console.log(`parse only (worker thread): ${workerRead} passages in ${workerReadS.toFixed(2)} s`);

    t0 = performance.now();
    const sha256 = fileSha256(file, true);
    const hashS = (performance.now() - t0) / 1000;
    console.log(`hash: ${hashS.toFixed(2)} s`);

    const load0 = loadavg()[0];
    const builds: Record<CorpusReaderName, { s: number; cpuS: number; mainCpuS: number }[]> = { inline: [], worker: [] };
    let idx: CorpusIndex | null = null;
    let indexDir = '';
    for (let round = 0; round < ROUNDS; round++) {
      for (const reader of CORPUS_READER_NAMES) {
        idx?.close();
        if (indexDir) rmSync(indexDir, { recursive: true, force: true });
        indexDir = join(dir, `idx-${reader}-${round}`);
        t0 = performance.now();
        cpu0 = process.cpuUsage();
        const main0 = mainThreadCpuS();
        idx = openCorpusIndex(file, {
          dir: indexDir,
          sha256,
          reader,
          onProgress: (p) => (p.done ? console.log(`  ${reader}: ${corpusProgressLine(p)}`) : undefined),
        });
        builds[reader].push({ s: (performance.now() - t0) / 1000, cpuS: cpuSince(cpu0), mainCpuS: mainThreadCpuS() - main0 });
        const b = builds[reader].at(-1)!;
        console.log(
          `build ${round + 1}/${ROUNDS} (${reader}): ${b.s.toFixed(2)} s, ${b.cpuS.toFixed(2)} s of CPU (${b.mainCpuS.toFixed(2)} s on the main thread); load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
        );
      }
    }
    const load1 = loadavg()[0];
    const medianOf = (reader: CorpusReaderName, k: 's' | 'cpuS' | 'mainCpuS'): number => median(builds[reader].map((b) => b[k]));
    const workerVsInline = median(builds.worker.map((b, r) => builds.inline[r].s / b.s));
    const bytes = statSync(corpusIndexPath(indexDir, sha256)).size;
    const buildS = hashS + medianOf('worker', 's');
    if (!idx) throw new Error('no build ran (CORPUS_BENCH_ROUNDS < 1)');
    const built: CorpusIndex = idx;
    // Query time is linear in the passages the query's words occur in: FTS5 scores every match
    // (no WAND / MaxScore skipping). Worst case: frequent words of the Zipf vocabulary (each in
    // 14-88% of the passages); a question of rarer words (in 0-7%) is the common case.
    // Each round asks for a different k, so no search is answered from the index's cache (the
    // work is the same: every match is scored whatever the k); query_repeat_ms is a cached repeat.
    // search() is the pruned top-k (corpusTopK.ts) where it can prove its answer, else the plain
    // query; searchPlain() is the plain query alone (FTS5 scores every match): same answers.
    const timeQueries = (queries: string[], round = (r: number) => 5 + r, plain = false): number => {
      const times: number[] = [];
      for (let r = 0; r < 10; r++) {
        for (const q of queries) {
          const tq = performance.now();
          if (plain) built.searchPlain(q, round(r));
          else built.search(q, round(r));
          times.push(performance.now() - tq);
        }
      }
      return median(times);
    };
    const frequent = ['kalo mira zen', 'tor vel qui dar sol', 'bri nox pel', 'mar tis gor fen ul'];
    const rare = ['which torvel river solbri', 'where was kalozen born'];
    // Questions: a rare word (the name), a mid-frequency one and a frequent one, by vocabulary rank.
    const questions = [
      [3_000, 200, 5],
      [8_000, 500, 20],
      [15_000, 150, 2],
      [6_000, 1_000, 40],
    ].map(([a, b, c]) => `which ${vocab[a]} ${vocab[b]} ${vocab[c]} was born`);
    const queryPlainMs = timeQueries(frequent, undefined, true);
    const queryMs = timeQueries(frequent);
    const queryRarePlainMs = timeQueries(rare, undefined, true);
    const queryRareMs = timeQueries(rare);
    const queryQuestionPlainMs = timeQueries(questions, undefined, true);
    const pruned0 = built.pruning?.stats.pruned ?? 0;
    const searched0 = pruned0 + (built.pruning?.stats.fallback ?? 0);
    const queryQuestionMs = timeQueries(questions);
    const questionsPruned =
      ((built.pruning?.stats.pruned ?? 0) - pruned0) / ((built.pruning?.stats.pruned ?? 0) + (built.pruning?.stats.fallback ?? 0) - searched0);
    const queryRepeatMs = timeQueries(frequent, () => 5);
    built.close();
    headline('corpus', {
      passages: PASSAGES,
      passages_per_s: PASSAGES / buildS,
      // Passages per second of the build's own CPU time, every thread: what unloaded cores give
      // (the machines are shared: wall time swings 3x with the load, CPU time less).
      passages_per_cpu_s: PASSAGES / (hashS + medianOf('worker', 'cpuS')),
      inline_passages_per_s: PASSAGES / (hashS + medianOf('inline', 's')),
      inline_passages_per_cpu_s: PASSAGES / (hashS + medianOf('inline', 'cpuS')),
      worker_vs_inline: workerVsInline,
      // The inserting thread's CPU time, inline over worker: the wall-time gain of the worker
      // where a second core is free (the insert thread is then the whole critical path).
      main_thread_cpu_inline_vs_worker: medianOf('inline', 'mainCpuS') / medianOf('worker', 'mainCpuS'),
      parse_share: parseCpuS / medianOf('inline', 'cpuS'),
      hash_s: hashS,
      parse_only_per_s: parsed / parseS,
      worker_read_per_s: workerRead / workerReadS,
      mb_per_s: mb / buildS,
      index_bytes_per_passage: bytes / PASSAGES,
      query_ms: queryMs,
      query_plain_ms: queryPlainMs,
      query_rare_ms: queryRareMs,
      query_rare_plain_ms: queryRarePlainMs,
      query_question_ms: queryQuestionMs,
      query_question_plain_ms: queryQuestionPlainMs,
      // Plain time over search() time (> 1: the pruned top-k is faster), and the share of the
      // question searches it answered (the rest fell back to the plain query).
      query_speedup: queryPlainMs / queryMs,
      query_question_speedup: queryQuestionPlainMs / queryQuestionMs,
      query_question_pruned_share: questionsPruned,
      query_repeat_ms: queryRepeatMs,
      load_avg: load0,
      load_avg_end: load1,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds of this process's main thread (Linux: /proc/self/task/<pid>/stat utime + stime, 100 ticks a second); NaN elsewhere. */
function mainThreadCpuS(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after "pid (comm) ": field 3 is state
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: fields 14 and 15 of the whole line
  } catch {
    return NaN;
  }
}

function cpuSince(cpu0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(cpu0);
  return (c.user + c.system) / 1e6;
}

void main();
