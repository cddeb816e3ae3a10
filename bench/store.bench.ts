/**
 * `store`: ingest speed of LabStore.writeStep on a file database (WAL, synchronous NORMAL), for a
 * realistic step: 64 episodes x 6 events x 1..3 members, 48-token outputs, 128-token prompts,
 * with token blobs (every Nth step) and without (the other steps). Steps are generated outside
 * the timed region; each timed call is one whole step transaction, commit included. Tokens on
 * and off are interleaved. Headline: member_rows_s and step_ms with tokens, the same without,
 * and database bytes per member row with tokens. Run: `npm run bench -- store`.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LabStore, type StepRecord } from '../src/core/store';
import { makeStep, stepCounts, type StepShape } from '../test/core/store/fixtures/makeStep';
import { headline, median } from './lib';

const SHAPE: StepShape = { episodes: 64, eventsPerEpisode: 6, maxK: 3, outputTokens: 48, fixedOutput: true, promptTokens: 128, tokens: true, metrics: 40 };
const WARMUP = 3;
const RUNS = 15;

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'srpo-store-bench-'));
  const path = join(dir, 'bench.db');
  try {
    const store = LabStore.open(path);
    const variants = [true, false].map((tokens) => ({
      tokens,
      runId: store.createRun({ name: `bench tokens=${tokens}`, config: SHAPE, seed: 0, workflow: 'math', algorithm: 'srpo' }),
      step: 0,
      times: [] as number[],
      members: [] as number[],
    }));
    const once = (v: (typeof variants)[number], timed: boolean): void => {
      const rec: StepRecord = makeStep(v.step, { ...SHAPE, tokens: v.tokens }, v.tokens ? 0 : 1);
      const t0 = performance.now();
      store.writeStep(v.runId, rec);
      const ms = performance.now() - t0;
      v.step++;
      if (timed) {
        v.times.push(ms);
        v.members.push(stepCounts(rec).members);
      }
    };
    for (let w = 0; w < WARMUP; w++) for (const v of variants) once(v, false);
    for (let r = 0; r < RUNS; r++) for (const v of variants) once(v, true);

    const [on, off] = variants.map((v) => {
      const stepMs = median(v.times);
      const members = median(v.members);
      return { stepMs, members, rowsPerS: members / (stepMs / 1000) };
    });
    store.db.raw.pragma('wal_checkpoint(TRUNCATE)');
    const membersOn = store.db.raw.prepare('SELECT count(*) FROM members WHERE prompt_tokens IS NOT NULL').pluck().get() as number;
    const blobBytes = store.db.raw
      .prepare('SELECT sum(length(prompt_tokens) + length(output_tokens) + length(logp_old) + length(mask)) FROM members WHERE prompt_tokens IS NOT NULL')
      .pluck()
      .get() as number;
    const fileBytes = statSync(path).size;
    store.close();
    console.log(
      `step: ${SHAPE.episodes} episodes x ${SHAPE.eventsPerEpisode} events, ~${on.members} members, ${SHAPE.outputTokens}-token outputs, ${SHAPE.promptTokens}-token prompts`,
    );
    console.log(`tokens on:  ${on.stepMs.toFixed(2)} ms/step, ${Math.round(on.rowsPerS)} member rows/s (median of ${RUNS})`);
    console.log(`tokens off: ${off.stepMs.toFixed(2)} ms/step, ${Math.round(off.rowsPerS)} member rows/s`);
    console.log(
      `blob bytes per member with tokens: ${Math.round(blobBytes / membersOn)}; database file ${(fileBytes / 2 ** 20).toFixed(1)} MiB for ${2 * (WARMUP + RUNS)} steps`,
    );
    headline('store', {
      member_rows_s: on.rowsPerS,
      step_ms: on.stepMs,
      member_rows_s_no_tokens: off.rowsPerS,
      step_ms_no_tokens: off.stepMs,
      members_per_step: on.members,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
