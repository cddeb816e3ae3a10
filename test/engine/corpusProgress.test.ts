/**
 * A run over a corpus file builds the corpus index in its engine (src/engine/runEngine.ts ->
 * Trainer -> buildEnvironment -> openCorpusIndex) and reports the build as log messages, the
 * lines `srpo-lab train` prints and the UI's log shows: one mid-build line (passages, %, rate,
 * ETA), then the line of the complete index, both before the engine says ready, and each report
 * as an `indexProgress` message (the dashboard's bar; the last one done). The index is
 * kept in `<db file>.corpora` beside the database, so a resume finds it and does not index again.
 * A real forked engine (tiny random model); the run is stopped once ready.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { presetConfig } from '../../src/core/config';
import type { EngineMessage } from '../../src/core/host/messages';
import { fileSha256 } from '../../src/core/data';
import { newRun, startRecorded, tempLab } from './helpers';

const indexLines = (messages: EngineMessage[]): string[] =>
  messages.flatMap((m) => (m.type === 'log' && m.line.startsWith('indexing corpus:') ? [m.line] : []));

describe('corpus index progress in the engine', () => {
  it('logs the build (a mid-build line, then the complete one) before ready; a resume reuses the index', async () => {
    const { dbPath, store } = tempLab();
    const corpus = join(dirname(dbPath), 'wiki.jsonl');
    const n = 120_000; // the build reports every 100k passages: one mid-build report, then the last
    writeFileSync(
      corpus,
      Array.from({ length: n }, (_, i) => JSON.stringify({ id: `w${i}`, contents: `"Entity ${i}"\nEntity ${i} is near entity ${(i * 7) % n}.` })).join('\n') +
        '\n',
    );
    const config = presetConfig('search-quick', {
      steps: 2,
      policies: { init: null, modelOverrides: { dModel: 32, nLayers: 1, nHeads: 2, contextLength: 512 } },
      workflow: { name: 'search', options: { searchers: { mode: 'fixed', k: 2 }, maxTurns: 1, verifier: false, topK: 1, docChars: 100, corpus } },
      rollout: { tasksPerStep: 2, groupSize: 2, maxNewTokens: 8 },
      eval: { every: 2, n: 2, queries: 2 },
    });
    const runId = newRun(store, config);

    const first = startRecorded(store, dbPath, runId, 'start');
    await first.waitFor((m) => m.type === 'ready', 'ready', 120_000);
    first.stop();
    await first.done;
    const lines = indexLines(first.messages);
    expect(lines[0]).toMatch(/^indexing corpus: 100000 passages, \d+\.\d%, \d+ passages\/s, ETA \d+ (s|min)$/);
    expect(lines.at(-1)).toMatch(new RegExp(`^indexing corpus: ${n} passages, 100\\.0%, \\d+ passages/s, done in \\d+ (s|min)$`));
    const readyAt = first.messages.findIndex((m) => m.type === 'ready');
    expect(first.messages.findIndex((m) => m.type === 'log' && m.line === lines.at(-1))).toBeLessThan(readyAt);
    // The same reports as structured messages, for the dashboard's bar: each one, the last marked done, all before ready.
    const reports = first.messages.flatMap((m, i) => (m.type === 'indexProgress' ? [{ ...m, i }] : []));
    expect(reports.map((r) => [r.passages, r.done])).toEqual([
      [100_000, false],
      [n, true],
    ]);
    expect(reports[0].bytesRead).toBeLessThanOrEqual(reports[0].totalBytes);
    expect(reports[1].bytesRead).toBe(reports[1].totalBytes);
    expect(reports[1].i).toBeLessThan(readyAt);
    expect(readdirSync(`${dbPath}.corpora`)).toEqual([`corpus-${fileSha256(corpus)}.sqlite`]);

    const resumed = startRecorded(store, dbPath, runId, 'resume');
    await resumed.waitFor((m) => m.type === 'ready', 'ready on resume', 120_000);
    resumed.stop();
    await resumed.done;
    expect(indexLines(resumed.messages)).toEqual([]);
    store.close();
  }, 240_000);
});
