/**
 * Corpus files indexed into FTS5 files beside the lab database (src/core/data/corpusIndex.ts):
 * FlashRAG `contents` JSONL streamed, an index reused by content hash, repeated searches answered
 * from a cache, the same ranking as the
 * in-memory Bm25Retriever on the HotpotQA mini corpus, progress reports and their line, a build
 * that writes only its temp file (64 KiB pages, no journal), a malformed line refused naming file
 * and line with no index left behind, and a build killed with SIGKILL leaving nothing a later run
 * would open (the next build starts afresh and removes the dead build's temp file).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import {
  Bm25Retriever,
  corpusIndexPath,
  corpusProgressLine,
  fileSha256,
  loadCorpus,
  loadDataset,
  openCorpusIndex,
  streamPassages,
  type CorpusProgress,
} from '../../../src/core/data';
import { HAS_SHARED_DATA, sharedPath } from './sharedData';

const dir = mkdtempSync(join(tmpdir(), 'srpo-corpus-'));

describe('corpus index files', () => {
  it('streams FlashRAG JSONL ({id, contents: "\\"Title\\"\\ntext"}) and finds passages by title and text', () => {
    const file = join(dir, 'wiki.jsonl');
    const rows = [
      { id: '1', contents: '"Tellmar"\nTellmar is a city in Orvania.' },
      { id: '2', contents: '"Zarvo Quill"\nZarvo Quill was born in Tellmar.' },
      { id: '3', title: 'Brightcog', text: 'Brightcog is a company based in Pellin. Ünïcode stays intact.' },
    ];
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const idx = openCorpusIndex(file, { dir: join(dir, 'idx1') });
    expect(idx.built).toBe(true);
    expect(idx.size).toBe(3);
    expect(idx.search('where was Zarvo Quill born', 1)[0]).toMatchObject({ id: '2', title: 'Zarvo Quill' });
    expect(idx.search('company Pellin', 1)[0].text).toContain('Ünïcode stays intact');
    idx.close();
    const again = openCorpusIndex(file, { dir: join(dir, 'idx1') });
    expect(again.built).toBe(false);
    expect(again.size).toBe(3);
    again.close();
    expect(readdirSync(join(dir, 'idx1'))).toEqual([`corpus-${fileSha256(file)}.sqlite`]);
  });

  it('answers a repeated search (same words, same k) from its cache, with copies the caller may change', () => {
    const file = join(dir, 'cache.jsonl');
    writeFileSync(
      file,
      ['{"id":"a","title":"Tellmar","text":"Tellmar is a city."}', '{"id":"b","title":"Pellin","text":"Pellin is a town near Tellmar."}'].join('\n') + '\n',
    );
    const idx = openCorpusIndex(file, { dir: join(dir, 'idx-cache') });
    const first = idx.search('Where is Tellmar?', 2);
    expect(first.map((h) => h.id)).toEqual(['a', 'b']);
    const expected = structuredClone(first);
    first[0].text = 'changed by the caller';
    expect(idx.search('where IS tellmar', 2)).toEqual(expected); // the same words: from the cache
    expect(idx.stats).toEqual({ searches: 2, cached: 1 });
    expect(idx.search('where is tellmar', 1)).toEqual(expected.slice(0, 1)); // another k: searched
    expect(idx.stats).toEqual({ searches: 3, cached: 1 });
    idx.close();
  });

  it('streams a file whose lines straddle the 8 MiB read chunks with multi-byte text intact', () => {
    const file = join(dir, 'big.jsonl');
    const n = 40_000;
    const line = (i: number): string => JSON.stringify({ id: `d${i}`, title: `Título ${i}`, text: `passage ${i} ${'ß€漢'.repeat(60)} end` });
    writeFileSync(file, Array.from({ length: n }, (_, i) => line(i)).join('\n')); // no final newline
    const seen: string[] = [];
    streamPassages(file, (p) => {
      if (!p.text.endsWith(' end') || !p.text.includes('ß€漢ß€漢')) throw new Error(`passage ${p.id} damaged`);
      seen.push(p.id);
    });
    expect(seen).toHaveLength(n);
    expect(seen[n - 1]).toBe(`d${n - 1}`);
  });

  it('reports progress every N passages and once complete; builds only its temp file, with its page size and FTS5 options', () => {
    const file = join(dir, 'progress.jsonl');
    writeFileSync(file, Array.from({ length: 2500 }, (_, i) => JSON.stringify({ id: `p${i}`, title: `T${i}`, text: `text ${i}` })).join('\n') + '\n');
    const seen: CorpusProgress[] = [];
    const where = join(dir, 'idx-progress');
    const during: string[][] = [];
    const idx = openCorpusIndex(file, {
      dir: where,
      progressEvery: 1000,
      onProgress: (p) => {
        seen.push({ ...p });
        during.push(readdirSync(where));
      },
    });
    expect(seen.map((p) => [p.passages, p.done])).toEqual([
      [1000, false],
      [2000, false],
      [2500, true],
    ]);
    // A count that ends on a report is reported once, as done.
    const even: CorpusProgress[] = [];
    openCorpusIndex(file, { dir: join(dir, 'idx-progress-2'), progressEvery: 1250, onProgress: (p) => even.push({ ...p }) }).close();
    expect(even.map((p) => [p.passages, p.done])).toEqual([
      [1250, false],
      [2500, true],
    ]);
    for (const names of during) expect(names).toEqual([expect.stringMatching(new RegExp(`^corpus-[0-9a-f]{64}\\.sqlite\\.tmp-${process.pid}-`))]); // no journal file
    expect(seen.at(-1)!.bytesRead).toBe(seen.at(-1)!.totalBytes);
    idx.close();
    const db = new Database(corpusIndexPath(where, fileSha256(file)), { readonly: true });
    expect(db.pragma('page_size', { simple: true })).toBe(65536);
    // The build's FTS5 options took (an option bound as a JS number is refused, and the build goes on without it).
    expect(
      Object.fromEntries(
        db
          .prepare('SELECT k, v FROM passages_config')
          .all()
          .map((r) => [(r as { k: string }).k, (r as { v: number }).v]),
      ),
    ).toMatchObject({ automerge: 0, crisismerge: 16, hashsize: 64 * 1024 * 1024 });
    db.close();
    expect(readdirSync(where)).toEqual([`corpus-${fileSha256(file)}.sqlite`]);
  });

  it('formats a progress line with percent, rate and ETA, then the time taken', () => {
    // 5.7% of the bytes in 30 s: 94.3 / 5.7 * 30 s = 496 s to go.
    expect(corpusProgressLine({ passages: 1_200_000, bytesRead: 57, totalBytes: 1000, elapsedMs: 30_000, done: false })).toBe(
      'indexing corpus: 1200000 passages, 5.7%, 40000 passages/s, ETA 8 min',
    );
    expect(corpusProgressLine({ passages: 994, bytesRead: 10, totalBytes: 10, elapsedMs: 250, done: true })).toBe(
      'indexing corpus: 994 passages, 100.0%, 3976 passages/s, done in 0 s',
    );
  });

  it('a malformed line is an error naming file and line, and no index file is left', () => {
    const file = join(dir, 'bad.jsonl');
    writeFileSync(file, '{"title":"a","text":"x"}\n{"title":"b","text":"y"}\n{"title":"c"}\n');
    const where = join(dir, 'idx-bad');
    expect(() => openCorpusIndex(file, { dir: where })).toThrow(/bad\.jsonl:3: a passage needs "text"/);
    expect(readdirSync(where)).toEqual([]);
  });

  it.skipIf(!HAS_SHARED_DATA)('ranks like the in-memory Bm25Retriever on the HotpotQA mini corpus (../shared/data)', () => {
    const file = sharedPath('corpus/hotpotqa_mini_corpus.json');
    const idx = openCorpusIndex(file, { dir: join(dir, 'idx-hp') });
    const mem = Bm25Retriever.open(loadCorpus(file));
    expect(idx.size).toBe(mem.size);
    for (const q of loadDataset(sharedPath('corpus/hotpotqa_mini_questions.json')).slice(0, 25)) {
      expect(idx.search(q.question, 5).map((h) => h.id)).toEqual(mem.search(q.question, 5).map((h) => h.id));
    }
    idx.close();
  });

  it('a build killed with SIGKILL leaves no index a later run would open; the next build starts afresh', async () => {
    const file = join(dir, 'kill.jsonl');
    const n = 100_000;
    writeFileSync(
      file,
      Array.from({ length: n }, (_, i) =>
        JSON.stringify({ id: `k${i}`, title: `Entity ${i}`, text: `Entity ${i} is related to entity ${(i * 7) % n} and to topic ${i % 97}.` }),
      ).join('\n') + '\n',
    );
    const where = join(dir, 'idx-kill');
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'corpusBuildChild.ts'), file, where], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killedAt = await new Promise<number>((res, rej) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const m = [...buf.matchAll(/PROGRESS (\d+)/g)].pop();
        if (m && Number(m[1]) >= 20_000) {
          child.kill('SIGKILL');
          res(Number(m[1]));
        }
        if (buf.includes('DONE')) rej(new Error('the build finished before it could be killed'));
      });
      child.on('exit', (code, signal) => {
        if (signal !== 'SIGKILL') rej(new Error(`child exited (${code}, ${signal}) before the kill: ${stderr}`));
      });
    });
    await new Promise<void>((res) => (child.exitCode !== null || child.signalCode !== null ? res() : child.once('exit', () => res())));
    expect(killedAt).toBeLessThan(n);
    const final = corpusIndexPath(where, fileSha256(file));
    expect(existsSync(final)).toBe(false); // nothing under the name a run opens
    const left = readdirSync(where);
    expect(left.length).toBe(1);
    expect(left[0]).toMatch(new RegExp(`^corpus-[0-9a-f]{64}\\.sqlite\\.tmp-${child.pid}-`));

    const idx = openCorpusIndex(file, { dir: where });
    expect(idx.built).toBe(true);
    expect(idx.size).toBe(n);
    expect(idx.search('Entity 99999', 1)[0].id).toBe('k99999');
    idx.close();
    expect(readdirSync(where)).toEqual([`corpus-${fileSha256(file)}.sqlite`]); // the dead build's temp file is gone
  });
});
