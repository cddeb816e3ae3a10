/**
 * `srpo-lab objective` as a user runs it: the embedded example batch, every variant, JSON out;
 * and the errors a user sees for a missing file, bad JSON and bad options.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args';
import { EXAMPLE_BATCH, objectiveCommand, readBatch } from '../../src/cli/objective';
import { ALGORITHMS, referenceObjective } from '../../src/core/srpo';

const spec = { options: ['batch', 'backend'], flags: ['all', 'json'] };

async function run(argv: string[]): Promise<string> {
  const lines: string[] = [];
  await objectiveCommand(parseArgs(['objective', ...argv], spec), (l) => lines.push(l));
  return lines.join('\n');
}

describe('srpo-lab objective', () => {
  it('computes every variant on the embedded example, matching the reference', async () => {
    const out = JSON.parse(await run(['--all', '--json']));
    expect(Object.keys(out.reports)).toEqual([...ALGORITHMS]);
    const batch = readBatch(EXAMPLE_BATCH);
    for (const algorithm of ALGORITHMS) {
      const ref = referenceObjective(batch, { algorithm });
      expect(out.reports[algorithm].loss).toBeCloseTo(ref.loss, 5);
      expect(out.reports[algorithm].droppedEvents).toBe(1);
    }
  });

  it('shows GRPO (trajectory grouping) and Dr. MAS (agent grouping) differing on the example', async () => {
    const out = JSON.parse(await run(['--all', '--json']));
    expect(out.reports.grpo_token.grouping).toBe('trajectory');
    expect(out.reports.drmas.grouping).toBe('agent');
    expect(Math.abs(out.reports.grpo_token.loss - out.reports.drmas.loss)).toBeGreaterThan(1e-4);
    const text = await run(['--all']);
    expect(text).toMatch(/drmas \(grouping agent\): loss/);
  });

  it('passes --set options through to the objective config', async () => {
    const out = JSON.parse(await run(['--json', '--set', 'setNorm=none', '--set', 'clipHigh=0.5']));
    const ref = referenceObjective(readBatch(EXAMPLE_BATCH), { setNorm: 'none', clipHigh: 0.5 });
    expect(out.reports.srpo.loss).toBeCloseTo(ref.loss, 5);
  });

  it('says what is wrong and where', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'srpo-cli-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "events": [');
    await expect(run(['--batch', bad])).rejects.toThrow(/bad\.json is not valid JSON/);
    await expect(run(['--batch', join(dir, 'missing.json')])).rejects.toThrow(/cannot read batch file .*missing\.json/);
    const nan = join(dir, 'nan.json');
    writeFileSync(
      nan,
      JSON.stringify({
        events: [{ id: 'e', group: 'g', reward: 1, expectedK: 1 }],
        members: [{ event: 'e', role: 'r', logpCur: [null], logpOld: [0], mask: [1] }],
      }),
    );
    await expect(run(['--batch', nan])).rejects.toThrow(/nan\.json: .*event "e".*"logpCur".*non-finite/);
    await expect(run(['--set', 'clipLow=2'])).rejects.toThrow(/field "clipLow" = 2/);
    expect(() => parseArgs(['objective', '--bogus'], spec)).toThrow(/unknown option --bogus.*--batch/);
  });
});
