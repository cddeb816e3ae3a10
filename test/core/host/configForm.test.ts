/**
 * Config validation takes its field problems as data, never by cutting an error's text: the
 * resolver (src/core/config/runConfig.ts) throws a FieldProblemsError whose text reads as before
 * (the CLI prints it) and whose problems name each field: the workflow's own options under
 * `workflow.options.<field>`, a dataset file under `tasks.<list>.<i>.dataset`. The API's
 * validateConfig (src/core/host/configForm.ts) answers those problems unchanged, and createRun
 * refuses with them as the error's issues.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeConfig, presetInput, resolveRunConfig } from '../../../src/core/config';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { FieldProblemsError } from '../../../src/core/util/schemaError';
import type { LabApiError } from '../../../src/shared/api';

const dir = mkdtempSync(join(tmpdir(), 'srpo-configform-'));
const missing = join(dir, 'nope.jsonl');

/** What resolveRunConfig throws for a math-quick input with `over` merged in. */
function thrown(over: Record<string, unknown>): FieldProblemsError {
  try {
    resolveRunConfig(mergeConfig(presetInput('math-quick'), over));
  } catch (e) {
    expect(e).toBeInstanceOf(FieldProblemsError);
    return e as FieldProblemsError;
  }
  throw new Error('resolveRunConfig accepted the config');
}

describe('the resolver throws its problems as data', () => {
  it('a workflow option: the field under workflow.options, the text as the CLI printed it', () => {
    const e = thrown({ workflow: { options: { maxLoops: 0 } } });
    expect(e.message).toBe('run config: field "workflow.options" (math): math workflow config: field "maxLoops" = 0: must be at least 1');
    expect(e.problems).toEqual([{ path: 'workflow.options.maxLoops', message: 'must be at least 1' }]);
  });

  it('two bad workflow options are two problems; an unknown one is named', () => {
    const e = thrown({ workflow: { options: { maxLoops: 99, solvers: { mode: 'fixed', k: 0 }, bogus: true } } });
    expect(e.problems).toEqual([
      { path: 'workflow.options.solvers.k', message: 'must be at least 1' },
      { path: 'workflow.options.maxLoops', message: 'must be at most 8' },
      { path: 'workflow.options.bogus', message: 'is not a field of this config (a typo?)' },
    ]);
  });

  it('a dataset file that does not exist: its entry, not workflow.options', () => {
    const e = thrown({ tasks: { train: [{ dataset: missing }], eval: [] } });
    expect(e.message).toMatch(/^run config: field "tasks\.train\.0\.dataset": ".*nope\.jsonl" does not exist/);
    expect(e.problems).toEqual([{ path: 'tasks.train.0.dataset', message: expect.stringMatching(/^".*nope\.jsonl" does not exist/) }]);
  });

  it("a top-level field: schemaProblems' sentence, the text unchanged", () => {
    const e = thrown({ steps: 0 });
    expect(e.message).toBe('run config: field "steps" = 0: must be at least 1');
    expect(e.problems).toEqual([{ path: 'steps', message: 'must be at least 1' }]);
  });
});

describe('through the API', () => {
  const service = new LabService({ dbPath: join(dir, 'lab.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  afterAll(async () => {
    await service.close();
  });

  it('validateConfig answers each field with its own sentence (no "run config", no field name, no workflow prefix)', async () => {
    const v = await service.call('validateConfig', { preset: 'math-quick', config: { workflow: { options: { maxLoops: 0 } } } });
    expect(v).toEqual({ ok: false, errors: [{ path: 'workflow.options.maxLoops', message: 'must be at least 1' }], config: null, diff: [] });
    const data = await service.call('validateConfig', { preset: 'math-quick', config: { tasks: { train: [{ dataset: missing }] } } });
    expect(data.errors).toEqual([{ path: 'tasks.train.0.dataset', message: expect.stringMatching(/^".*nope\.jsonl" does not exist/) }]);
    for (const e of [...v.errors, ...data.errors]) expect(e.message).not.toMatch(/run config|field "|^\(/);
  });

  it('createRun refuses with the same problems as its issues, and creates nothing', async () => {
    const err = (await service.call('createRun', { preset: 'math-quick', config: { workflow: { options: { maxLoops: 0 } } } }).catch((e) => e)) as LabApiError;
    expect(err.code).toBe('invalid_input');
    expect(err.message).toBe('run config: workflow.options.maxLoops: must be at least 1');
    expect(err.issues).toEqual([{ path: 'workflow.options.maxLoops', message: 'must be at least 1' }]);
    expect(service.store.listRuns()).toEqual([]);
  });

  it('a valid config still resolves, with its diff from the preset', async () => {
    const v = await service.call('validateConfig', { preset: 'math-quick', config: { workflow: { options: { maxLoops: 2 } } } });
    expect(v.ok).toBe(true);
    expect(v.diff).toEqual([{ path: 'workflow.options.maxLoops', before: 1, after: 2 }]);
  });
});
