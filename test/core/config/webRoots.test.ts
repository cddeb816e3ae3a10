/**
 * Web mode reaches only the lab's files (issue 26: validateConfig with `tasks.train: [{dataset:
 * "/etc/shadow"}]` answered ok with the file's sha256, the same for `workflow.options.corpus`,
 * and `policies.init` answered "does not exist" / "is not a folder" / "is not a checkpoint
 * folder" for any path). A LabService given path roots (what `srpo-lab serve` gives it) refuses
 * every path field outside them with one sentence, the same whatever is or is not there,
 * symlinks resolved; inside the roots paths work as before; a LabService without roots (the
 * desktop app, the CLI) keeps any path.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabService } from '../../../src/core/host/labService';
import { NodeForkLauncher } from '../../../src/core/host/launcher';
import { PathRoots } from '../../../src/core/host/pathRoots';
import { parseArgs } from '../../../src/cli/args';
import { LabApiError, type ConfigValidation } from '../../../src/shared/api';

const top = realpathSync(mkdtempSync(join(tmpdir(), 'srpo-webroots-')));
const root = join(top, 'lab'); // the allowed folder (holds the database)
const outside = join(top, 'elsewhere'); // readable by the server, not allowed
const SECRET = 'root:$6$SECRET_CONTENT:19000:0:99999:7:::\n';

const write = (path: string, text: string) => (mkdirSync(join(path, '..'), { recursive: true }), writeFileSync(path, text), path);
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const secretFile = write(join(outside, 'shadow'), SECRET);
const outsideModel = join(outside, 'model');
write(join(outsideModel, 'config.json'), '{}');
write(join(outsideModel, 'model.safetensors'), '');
const insideData = write(join(root, 'data', 'train.jsonl'), '{"question":"1+1?","answer":"2"}\n');
mkdirSync(join(root, 'links'), { recursive: true });
symlinkSync(secretFile, join(root, 'links', 'shadow-link'));
symlinkSync(outside, join(root, 'links', 'outside-dir'));
symlinkSync(join(outside, 'no-such-file'), join(root, 'links', 'dangling'));

/** The refusal with the quoted path taken out: it must read the same for every outside path. */
const shape = (message: string, given: string) => message.split(`"${given}"`).join('"PATH"');

describe('web mode: path fields only under the allowed folders', () => {
  let web: LabService;
  let desktop: LabService;

  beforeAll(() => {
    // serve's default roots: the database's folder and the lab's resources/ (the presets' warm starts).
    const dbPath = join(root, 'lab.db');
    web = new LabService({ dbPath, launcher: new NodeForkLauncher({ stdio: 'pipe' }), pathRoots: PathRoots.defaults(dbPath) });
    desktop = new LabService({ dbPath: join(top, 'desktop.db'), launcher: new NodeForkLauncher({ stdio: 'pipe' }) });
  });

  afterAll(async () => {
    await web?.close();
    await desktop?.close();
  });

  const validate = (service: LabService, config: Record<string, unknown>) =>
    service.call('validateConfig', { preset: 'math-quick', config }) as Promise<ConfigValidation>;
  const datasetAt = (path: string) => ({ tasks: { train: [{ dataset: path }], eval: [] } });

  /** The one error of a refused validation at `field`. */
  async function refusal(config: Record<string, unknown>, field: string): Promise<string> {
    const v = await validate(web, config);
    expect(v.ok, JSON.stringify(v)).toBe(false);
    expect(JSON.stringify(v)).not.toContain(sha(SECRET));
    expect(JSON.stringify(v)).not.toContain('SECRET_CONTENT');
    const e = v.errors.find((x) => x.path === field);
    expect(e, JSON.stringify(v.errors)).toBeDefined();
    return e!.message;
  }

  it('refuses a dataset file outside the roots with the same words as a path that does not exist', async () => {
    const existing = await refusal(datasetAt(secretFile), 'tasks.train.0.dataset');
    const missing = await refusal(datasetAt(join(outside, 'no-such-file.jsonl')), 'tasks.train.0.dataset');
    const noFolder = await refusal(datasetAt('/no-such-folder-srpo/x.jsonl'), 'tasks.train.0.dataset');
    const etc = await refusal(datasetAt('/etc/shadow'), 'tasks.train.0.dataset');
    expect(existing).toMatch(/outside the folders this server may read/);
    expect(shape(missing, join(outside, 'no-such-file.jsonl'))).toBe(shape(existing, secretFile));
    expect(shape(noFolder, '/no-such-folder-srpo/x.jsonl')).toBe(shape(existing, secretFile));
    expect(shape(etc, '/etc/shadow')).toBe(shape(existing, secretFile));
    // A relative path climbing out of the working directory is judged where it lands.
    expect(await refusal(datasetAt('../../../../../../../../etc/passwd'), 'tasks.train.0.dataset')).toMatch(/outside the folders/);
  });

  it('refuses a corpus and a dataset slot outside the roots the same way', async () => {
    const corpus = await refusal({ workflow: { name: 'search', options: { corpus: secretFile } } }, 'workflow.options.corpus');
    expect(shape(corpus, secretFile)).toBe(shape(await refusal(datasetAt(secretFile), 'tasks.train.0.dataset'), secretFile));
    const slot = await refusal({ tasks: { train: [{ dataset: '$mine' }], eval: [], paths: { mine: secretFile } } }, 'tasks.paths.mine');
    expect(shape(slot, secretFile)).toBe(shape(corpus, secretFile));
  });

  it('answers policies.init outside the roots with one sentence whether it is a checkpoint, a file, a folder or nothing', async () => {
    const given = [outsideModel, secretFile, outside, join(outside, 'nope'), '/etc'];
    const messages = await Promise.all(given.map((p) => refusal({ policies: { init: p } }, 'policies.init')));
    for (const [i, m] of messages.entries()) {
      expect(m).not.toMatch(/does not exist|is not a folder|is not a checkpoint/);
      expect(shape(m, given[i])).toBe(shape(messages[0], given[0]));
    }
  });

  it('follows symlinks: a link inside a root to a file or folder outside is refused, a dangling one too', async () => {
    const viaFile = await refusal(datasetAt(join(root, 'links', 'shadow-link')), 'tasks.train.0.dataset');
    expect(shape(viaFile, join(root, 'links', 'shadow-link'))).toBe(shape(await refusal(datasetAt(secretFile), 'tasks.train.0.dataset'), secretFile));
    await refusal(datasetAt(join(root, 'links', 'outside-dir', 'shadow')), 'tasks.train.0.dataset');
    await refusal(datasetAt(join(root, 'links', 'dangling')), 'tasks.train.0.dataset');
    await refusal({ policies: { init: join(root, 'links', 'outside-dir', 'model') } }, 'policies.init');
  });

  it('accepts files inside the roots and hashes them as before', async () => {
    const v = await validate(web, datasetAt(insideData));
    expect(v.errors).toEqual([]);
    const train = (v.config as { tasks: { train: { sha256: string }[] } }).tasks.train[0];
    expect(train.sha256).toBe(sha('{"question":"1+1?","answer":"2"}\n'));
    // Inside a root, a missing file is still named as missing.
    const missing = await validate(web, datasetAt(join(root, 'data', 'nope.jsonl')));
    expect(missing.errors[0].message).toMatch(/does not exist/);
  });

  it('refuses createRun and createSuite naming an outside path, before any run exists', async () => {
    const create = web.call('createRun', { preset: 'math-quick', config: datasetAt(secretFile) });
    await expect(create).rejects.toBeInstanceOf(LabApiError);
    await expect(create).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/outside the folders/) });
    const suite = web.call('createSuite', { spec: { seeds: [1], rows: [{ preset: 'math-quick', sets: { 'policies.init': outsideModel } }] } });
    await expect(suite).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringMatching(/outside the folders/) });
    expect(await web.call('listRuns', {})).toEqual([]);
  });

  it('keeps any path for a LabService without roots (the desktop app and the CLI)', async () => {
    const v = await validate(desktop, datasetAt(secretFile));
    expect(v.errors).toEqual([]);
    expect((v.config as { tasks: { train: { sha256: string }[] } }).tasks.train[0].sha256).toBe(sha(SECRET));
  });

  it('serve takes --allow more than once; a root that does not exist is named at start', () => {
    expect(parseArgs(['serve', '--allow', root, '--allow', outside], { options: ['allow'], flags: [] }).lists.allow).toEqual([root, outside]);
    expect(() => new PathRoots([join(top, 'missing-root')])).toThrow(/allowed folder ".*missing-root" does not exist/);
    expect(new PathRoots([join(root, 'links', '..')]).allows(insideData)).toBe(true);
  });
});
