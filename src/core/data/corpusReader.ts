/**
 * Reading a corpus file's passages in batches for the index build (corpusIndex.ts), two ways, an
 * entry each of CORPUS_READERS:
 * - `inline`: streamPassages on this thread, the reference. JSONL is read in 8 MiB chunks and
 *   parsed line by line (corpus.ts passageFrom says what a record means); a JSON list or a title
 *   -> sentences object (small corpora) is read whole by corpus.ts loadCorpus.
 * - `worker`: the same reading and parsing of JSONL in a worker thread while this thread inserts
 *   (the machines have 2 cores; FTS5's insert is single-threaded and takes ~90% of a build, so the
 *   parse moves off its thread). The build is synchronous (the trainer builds its environment in a
 *   constructor), so this thread blocks on Atomics.wait until a batch is posted and takes it with
 *   receiveMessageOnPort (parquet.ts does the same). Memory stays bounded: the worker waits while
 *   AHEAD batches are unconsumed. A file whose first line is not a passage record goes to `inline`.
 *
 * The worker is CommonJS evaluated from a string (no file to ship beside the bundles), so its
 * record rules repeat corpus.ts passageFrom's (and jsonl.ts jsonSyntaxText's) in plain JS;
 * test/core/data/corpusReader.test.ts checks both readers give the same passages, the same batches' byte counts and the same errors
 * (file:line) on seeded and malformed files. Invalid UTF-8 is refused naming the line by both
 * (utf8.ts; the worker's decodeLines repeats decodeUtf8Lines).
 * Node-only (fs, worker_threads).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { loadCorpus, passageFrom } from './corpus';
import { parseJsonlLine } from './jsonl';
import type { Passage } from './types';
import { decodeUtf8Lines } from './utf8';

/** Passages of one batch, as parallel columns, and the bytes of the file read when it was cut. */
export interface PassageBatch {
  ids: string[];
  titles: string[];
  texts: string[];
  bytesRead: number;
}

export const CORPUS_READER_NAMES = ['inline', 'worker'] as const;
export type CorpusReaderName = (typeof CORPUS_READER_NAMES)[number];

/** Passages per batch: ~0.8 MB of a Wikipedia dump, one message. */
const BATCH = 1024;
/** Batches the worker may post ahead of the consumer (bounds the memory to ~AHEAD MB plus a chunk). */
const AHEAD = 8;
/** Longest wait for one batch from the worker before the build gives up. */
const STALL_MS = 10 * 60_000;
const CHUNK = 8 << 20;

/** What a read did: batches delivered, and the most batches the worker had posted ahead of the consumer. */
export interface ReadStats {
  batches: number;
  maxAhead: number;
}

type Reader = (path: string, onBatch: (b: PassageBatch) => void, stats: ReadStats) => void;

export const CORPUS_READERS = {
  inline: readInline,
  worker: readInWorker,
} satisfies Record<CorpusReaderName, Reader>;

/** Every passage of `path` in batches, in file order, by the named reader; returns what the read did. */
export function readPassageBatches(path: string, onBatch: (b: PassageBatch) => void, reader: CorpusReaderName = 'worker'): ReadStats {
  const read = (CORPUS_READERS as Record<string, Reader>)[reader];
  if (!read) throw new Error(`unknown corpus reader "${reader}"; valid: ${CORPUS_READER_NAMES.join(', ')}`);
  const stats: ReadStats = { batches: 0, maxAhead: 0 };
  read(path, (b) => (stats.batches++, onBatch(b)), stats);
  return stats;
}

function readInline(path: string, onBatch: (b: PassageBatch) => void): void {
  let b: PassageBatch = { ids: [], titles: [], texts: [], bytesRead: 0 };
  streamPassages(path, (p, bytesRead) => {
    if (b.ids.length === BATCH || (b.ids.length > 0 && bytesRead !== b.bytesRead)) {
      onBatch(b);
      b = { ids: [], titles: [], texts: [], bytesRead: 0 };
    }
    b.ids.push(p.id);
    b.titles.push(p.title);
    b.texts.push(p.text);
    b.bytesRead = bytesRead;
  });
  if (b.ids.length > 0) onBatch(b);
}

/**
 * Every passage of a corpus file, in order, with the bytes read so far. JSONL is streamed line by
 * line; a JSON list or a title -> sentences object (the first line is not one passage record) is
 * read whole by loadCorpus.
 */
export function streamPassages(path: string, onPassage: (p: Passage, bytesRead: number) => void): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let pending = Buffer.alloc(0);
    let bytesRead = 0;
    let lineNo = 0;
    let index = 0;
    let first = true;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      bytesRead += n;
      const data = pending.length ? Buffer.concat([pending, buf.subarray(0, n)]) : buf.subarray(0, n);
      // Decode only up to the last newline byte, so no multi-byte character is cut in two; invalid
      // UTF-8 is refused naming its line (utf8.ts), never turned into U+FFFD.
      const cut = n === 0 ? data.length : data.lastIndexOf(0x0a) + 1;
      const text = decodeUtf8Lines(data.subarray(0, cut), path, lineNo);
      pending = Buffer.from(data.subarray(cut)); // a copy: buf is reused by the next read
      const lines = text.split('\n');
      if (text.endsWith('\n')) lines.pop();
      for (const line of lines) {
        lineNo++;
        if (line.trim() === '') continue;
        if (first) {
          first = false;
          if (!startsJsonl(line)) {
            for (const p of loadCorpus(path)) onPassage(p, bytesRead);
            return;
          }
        }
        onPassage(passageFrom(parseJsonlLine(line, `${path}:${lineNo}`), index++, `${path}:${lineNo}`), bytesRead);
      }
      if (n === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** Whether a file whose first non-blank line is `line` is JSONL of passages (else one JSON value, or malformed: corpus.ts says which). */
function startsJsonl(line: string): boolean {
  if (line.trimStart()[0] === '[') return false;
  try {
    const v = JSON.parse(line) as Record<string, unknown> | null;
    return v !== null && typeof v === 'object' && !Array.isArray(v) && (typeof v.text === 'string' || typeof v.contents === 'string');
  } catch {
    return false;
  }
}

// Slots of the shared counters: batches posted, batches taken, and the consumer's stop request.
const POSTED = 0;
const TAKEN = 1;
const STOP = 2;

/**
 * The worker: the JSONL path of streamPassages and corpus.ts passageFrom in plain JS (same
 * messages, same line numbers, same bytesRead per chunk). Posts `{ batch }`, `{ error }`,
 * `{ notJsonl: true }` (the first line is not a passage record) or `{ end: true }`, each followed
 * by an increment of POSTED.
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { port, counters, path, CHUNK, BATCH, AHEAD } = workerData;
const post = (msg, transfer) => { port.postMessage(msg, transfer); Atomics.add(counters, ${POSTED}, 1); Atomics.notify(counters, ${POSTED}); };
const stopped = () => Atomics.load(counters, ${STOP}) !== 0;
function passage(raw, i, where) {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(where + ': expected an object');
  const id = typeof raw.id === 'string' || typeof raw.id === 'number' ? String(raw.id) : 'p' + i;
  if (typeof raw.text === 'string') return [id, typeof raw.title === 'string' ? raw.title : '', raw.text];
  if (typeof raw.contents === 'string') {
    const c = raw.contents, nl = c.indexOf('\\n');
    const title = (nl >= 0 ? c.slice(0, nl) : '').replace(/^"|"$/g, '');
    return [id, typeof raw.title === 'string' ? raw.title : title, nl >= 0 ? c.slice(nl + 1) : c];
  }
  throw new Error(where + ': a passage needs "text" (or FlashRAG "contents")');
}
function syntaxText(e, text) {
  const message = e instanceof Error ? e.message : String(e);
  if (/^Unexpected end of JSON input/.test(message)) return 'the text ends inside a value (an unclosed string, list or object)';
  const m = /^([A-Z][^\\n]*?) in JSON at position (\\d+)/.exec(message);
  if (m && !m[1].includes('"')) {
    const pos = Number(m[2]), before = text.slice(0, pos);
    const line = before.split('\\n').length, column = pos - before.lastIndexOf('\\n');
    return m[1][0].toLowerCase() + m[1].slice(1) + ' at ' + (line > 1 ? 'line ' + line + ', ' : '') + 'column ' + column;
  }
  return 'not JSON: expected an object, a list, text in double quotes, a number, true, false or null';
}
function parse(line, where) {
  try { return JSON.parse(line); } catch (e) { throw new Error(where + ': invalid JSON: ' + syntaxText(e, line)); }
}
function startsJsonl(line) {
  if (line.trimStart()[0] === '[') return false;
  try {
    const v = JSON.parse(line);
    return v !== null && typeof v === 'object' && !Array.isArray(v) && (typeof v.text === 'string' || typeof v.contents === 'string');
  } catch { return false; }
}
let batch = { ids: [], titles: [], texts: [], bytesRead: 0 };
function flush() {
  while (Atomics.load(counters, ${POSTED}) - Atomics.load(counters, ${TAKEN}) >= AHEAD) {
    if (stopped()) return false;
    Atomics.wait(counters, ${TAKEN}, Atomics.load(counters, ${TAKEN}), 200);
  }
  if (stopped()) return false;
  post({ batch });
  batch = { ids: [], titles: [], texts: [], bytesRead: 0 };
  return true;
}
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
function decodeLines(bytes, linesBefore) {
  try { return strict.decode(bytes); } catch {}
  let start = 0, line = linesBefore;
  while (start < bytes.length) {
    line++;
    const nl = bytes.indexOf(0x0a, start), end = nl < 0 ? bytes.length : nl + 1;
    try { strict.decode(bytes.subarray(start, end)); } catch { break; }
    start = end;
  }
  throw new Error(path + ':' + line + ': not valid UTF-8 (a byte sequence that is no character); save the file as UTF-8');
}
function run() {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let pending = Buffer.alloc(0), bytesRead = 0, lineNo = 0, index = 0, first = true;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      bytesRead += n;
      const data = pending.length ? Buffer.concat([pending, buf.subarray(0, n)]) : buf.subarray(0, n);
      const cut = n === 0 ? data.length : data.lastIndexOf(0x0a) + 1;
      const text = decodeLines(data.subarray(0, cut), lineNo);
      pending = Buffer.from(data.subarray(cut));
      const lines = text.split('\\n');
      if (text.endsWith('\\n')) lines.pop();
      for (const line of lines) {
        lineNo++;
        if (line.trim() === '') continue;
        if (first) {
          first = false;
          if (!startsJsonl(line)) return post({ notJsonl: true });
        }
        const where = path + ':' + lineNo;
        const p = passage(parse(line, where), index++, where);
        const full = batch.ids.length === BATCH || (batch.ids.length > 0 && bytesRead !== batch.bytesRead);
        if (full && !flush()) return;
        batch.ids.push(p[0]); batch.titles.push(p[1]); batch.texts.push(p[2]); batch.bytesRead = bytesRead;
      }
      if (n === 0) break;
    }
    if (batch.ids.length > 0 && !flush()) return;
    post({ end: true });
  } finally {
    closeSync(fd);
  }
}
try { run(); } catch (err) { post({ error: String((err && err.message) || err) }); }
`;

type WorkerMessage = { batch: PassageBatch } | { error: string } | { notJsonl: true } | { end: true };

/**
 * The next message of a port whose sender has counted it as posted. The count can be seen a
 * moment before the message can be received on this thread (seen once in a full test run on a
 * loaded machine), so an empty port is asked again, 1 ms apart, for up to `waitMs` before the
 * count is called wrong.
 */
export function receivePosted(port: MessagePort, waitMs: number): WorkerMessage | undefined {
  const first = receiveMessageOnPort(port);
  if (first) return first.message as WorkerMessage; // the usual case: no waiting set up
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + waitMs;
  for (;;) {
    Atomics.wait(nap, 0, 0, 1);
    const got = receiveMessageOnPort(port);
    if (got) return got.message as WorkerMessage;
    if (performance.now() > deadline) return undefined;
  }
}

function readInWorker(path: string, onBatch: (b: PassageBatch) => void, stats: ReadStats): void {
  const counters = new Int32Array(new SharedArrayBuffer(12));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER, { eval: true, workerData: { port: port2, counters, path, CHUNK, BATCH, AHEAD }, transferList: [port2] });
  worker.unref(); // never what keeps the process alive; a build that returns or throws has stopped it
  let taken = 0;
  try {
    for (;;) {
      if (Atomics.load(counters, POSTED) === taken && Atomics.wait(counters, POSTED, taken, STALL_MS) === 'timed-out') {
        throw new Error(`${path}: the corpus reader thread sent nothing in ${STALL_MS / 1000} s`);
      }
      stats.maxAhead = Math.max(stats.maxAhead, Atomics.load(counters, POSTED) - taken);
      const msg = receivePosted(port1, STALL_MS);
      if (!msg) throw new Error(`${path}: the corpus reader thread counted a message it did not send`);
      taken++;
      Atomics.store(counters, TAKEN, taken);
      Atomics.notify(counters, TAKEN);
      if ('batch' in msg) onBatch(msg.batch);
      else if ('error' in msg) throw new Error(msg.error);
      else if ('notJsonl' in msg) return readInline(path, onBatch);
      else return;
    }
  } finally {
    Atomics.store(counters, STOP, 1);
    Atomics.notify(counters, TAKEN);
    port1.close();
    void worker.terminate();
  }
}
