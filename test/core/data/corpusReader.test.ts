/**
 * The two corpus readers (src/core/data/corpusReader.ts) agree: the worker thread, whose record
 * rules are plain JS repeating corpus.ts passageFrom, gives the passages the inline reference
 * gives, in the same order and with the same bytes-read marks, on a seeded file of every record
 * shape (FlashRAG `contents` with and without a title line, quoted titles, a title overriding
 * `contents`, numeric and missing ids, blank lines, multi-byte text) that straddles the 8 MiB read
 * chunk; the same error naming file and line on malformed lines; JSON lists and title ->
 * sentences objects handed to the inline reader; at most 8 batches posted ahead of a slow
 * consumer (bounded memory); an error thrown by the consumer stops the read.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { CORPUS_READER_NAMES, readPassageBatches, receivePosted, type CorpusReaderName, type PassageBatch } from '../../../src/core/data/corpusReader';
import { createRng } from '../../../src/core/data/prng';

const dir = mkdtempSync(join(tmpdir(), 'srpo-corpus-reader-'));

/** Every passage a reader gives, with the bytes-read mark of its batch. */
function readAll(path: string, reader: CorpusReaderName): { passages: [string, string, string, number][]; batches: number } {
  const passages: [string, string, string, number][] = [];
  const stats = readPassageBatches(path, (b: PassageBatch) => b.ids.forEach((id, i) => passages.push([id, b.titles[i], b.texts[i], b.bytesRead])), reader);
  return { passages, batches: stats.batches };
}

/** The error message a reader throws on `path`. */
function errorOf(path: string, reader: CorpusReaderName): string {
  try {
    readPassageBatches(path, () => {}, reader);
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
}

/** A seeded line of one of the record shapes a corpus file may hold. */
function recordLine(i: number, rng: { next(): number }): string {
  const words = Array.from(
    { length: 5 + Math.floor(rng.next() * 60) },
    (_, w) => ['alpha', 'Bêta', 'γάμμα', '漢字', 'x"y', 'back\\slash', `w${w}`][Math.floor(rng.next() * 7)],
  ).join(' ');
  switch (Math.floor(rng.next() * 7)) {
    case 0:
      return JSON.stringify({ id: String(i), contents: `"Title ${i}"\n${words}` });
    case 1:
      return JSON.stringify({ id: i, contents: words }); // no title line
    case 2:
      return JSON.stringify({ contents: `Unquoted ${i}\n${words}\nsecond line` }); // no id: p<index>
    case 3:
      return JSON.stringify({ id: `t${i}`, title: `Given ${i}`, contents: `"Ignored"\n${words}` });
    case 4:
      return JSON.stringify({ id: `d${i}`, title: `Títle ${i}`, text: words });
    case 5:
      return JSON.stringify({ text: words, extra: { nested: [1, 2] } }); // no title, no id
    default:
      return `  ${JSON.stringify({ id: i, title: 7, text: words })}  \n`; // a non-string title, padding, then a blank line
  }
}

describe('corpus readers: the worker thread gives what the inline reference gives', () => {
  it('every record shape, in order, with the same bytes-read marks, across an 8 MiB chunk boundary', () => {
    const rng = createRng('corpus-reader');
    const file = join(dir, 'mixed.jsonl');
    const lines: string[] = [];
    for (let i = 0, bytes = 0; bytes < 11 << 20; i++) {
      lines.push(recordLine(i, rng));
      bytes += Buffer.byteLength(lines[i]) + 1;
    }
    writeFileSync(file, lines.join('\n')); // no final newline
    const inline = readAll(file, 'inline');
    const worker = readAll(file, 'worker');
    expect(worker.passages.length).toBe(inline.passages.length);
    expect(worker.passages).toEqual(inline.passages);
    expect(worker.batches).toBe(inline.batches);
    // Not vacuous: both chunks were read, and every shape occurs.
    expect(new Set(inline.passages.map((p) => p[3])).size).toBe(2);
    expect(inline.passages.some((p) => p[0].startsWith('p') && p[1] === '')).toBe(true);
    expect(inline.passages.some((p) => p[1].startsWith('Given '))).toBe(true);
    expect(inline.passages.some((p) => p[1].startsWith('Title ') && !p[2].startsWith('"'))).toBe(true);
  });

  it.each([
    ['invalid JSON', 'bad-json.jsonl', '{"id":1,"text":"a"}\n\n{"id":2,"text":"b"}\n{"id":3,"text":\n', /bad-json\.jsonl:4: invalid JSON/],
    ['no text', 'no-text.jsonl', '{"id":1,"text":"a"}\n{"id":2,"title":"b"}\n', /no-text\.jsonl:2: a passage needs "text" \(or FlashRAG "contents"\)/],
    ['not an object', 'not-object.jsonl', '{"id":1,"text":"a"}\n[1, 2]\n', /not-object\.jsonl:2: expected an object/],
  ])('%s: the same error naming file and line', (_, name, content, expected) => {
    const file = join(dir, name);
    writeFileSync(file, content);
    const message = errorOf(file, 'inline');
    expect(message).toMatch(expected);
    expect(errorOf(file, 'worker')).toBe(message);
  });

  it('a JSON list and a title -> sentences object go to the inline reader (read whole by corpus.ts)', () => {
    const list = join(dir, 'list.json');
    writeFileSync(
      list,
      JSON.stringify(
        [
          { title: 'A', text: 'one' },
          { id: 'x', contents: '"B"\ntwo' },
        ],
        null,
        1,
      ),
    );
    const sentences = join(dir, 'sentences.json');
    writeFileSync(sentences, JSON.stringify({ Tellmar: ['Tellmar is ', 'a city.'], Pellin: ['A town.'] }));
    for (const file of [list, sentences]) expect(readAll(file, 'worker').passages).toEqual(readAll(file, 'inline').passages);
    expect(readAll(sentences, 'worker').passages.map((p) => p.slice(0, 3))).toEqual([
      ['p0', 'Tellmar', 'Tellmar is a city.'],
      ['p1', 'Pellin', 'A town.'],
    ]);
  });

  it('a slow consumer: the worker waits with at most 8 batches posted ahead', () => {
    const file = join(dir, 'slow.jsonl');
    writeFileSync(file, Array.from({ length: 40_000 }, (_, i) => JSON.stringify({ id: i, text: `passage ${i}` })).join('\n'));
    let first = true;
    const stats = readPassageBatches(
      file,
      () => {
        if (!first) return;
        first = false;
        const until = performance.now() + 500; // the worker has long read the whole file by then, had it not waited
        while (performance.now() < until);
      },
      'worker',
    );
    expect(stats.batches).toBe(Math.ceil(40_000 / 1024));
    expect(stats.maxAhead).toBeGreaterThanOrEqual(2); // it did run ahead…
    expect(stats.maxAhead).toBeLessThanOrEqual(8); // …but no further
  });

  it('an error thrown by the consumer ends the read with that error; the next read works', () => {
    const file = join(dir, 'stop.jsonl');
    writeFileSync(file, Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ id: i, text: `t ${i}` })).join('\n'));
    let seen = 0;
    expect(() =>
      readPassageBatches(file, (b) => {
        seen += b.ids.length;
        if (seen > 3000) throw new Error('lease lost');
      }),
    ).toThrow('lease lost');
    expect(readAll(file, 'worker').passages).toHaveLength(20_000);
  });

  it('an unknown reader is an error listing the valid ones', () => {
    expect(() => readPassageBatches(join(dir, 'stop.jsonl'), () => {}, 'gpu' as CorpusReaderName)).toThrow(
      `unknown corpus reader "gpu"; valid: ${CORPUS_READER_NAMES.join(', ')}`,
    );
  });
});

describe('receivePosted: a message counted before it can be received', () => {
  it('waits for a message that arrives after the count (a thread posting 30 ms later), and gives up after the wait', () => {
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(`const { workerData } = require('node:worker_threads'); setTimeout(() => workerData.port.postMessage({ end: true }), 30);`, {
      eval: true,
      workerData: { port: port2 },
      transferList: [port2],
    });
    try {
      expect(receiveMessageOnPort(port1)).toBeUndefined(); // what one look saw before: nothing yet
      expect(receivePosted(port1, 5_000)).toEqual({ end: true });
      expect(receivePosted(port1, 20)).toBeUndefined();
    } finally {
      port1.close();
      void worker.terminate();
    }
  });
});
