/**
 * `export-model RUN [--step N] [--role R] --out DIR [--merge]`: takes a trained Hugging Face
 * policy out of a run checkpoint into a folder the usual tools open. A LoRA policy is written as
 * a peft adapter (adapter_config.json + adapter_model.safetensors; PeftModel.from_pretrained on
 * the base), or with --merge as a complete transformers folder with the adapter folded into the
 * weights, in bf16, the base's config and tokenizer files copied. A full fine-tune is always a
 * complete folder (bf16). Writing is models/hf/saveAdapter.ts / saveModel.ts (atomic: a temporary
 * folder renamed into place; an occupied --out is refused).
 *
 * The destination is checked before anything is read: a symbolic link there (to anything, or
 * dangling) is refused in words; so is a folder inside the database's run folders
 * (`<db>.runs/`, and the older layout's `runs/` beside the database), judged after resolving
 * links, because the lab removes and replaces what is there (a checkpoint saved again, a run
 * deleted) and would take the export with it. File-system errors name the path in words.
 *
 * `--step N` is the checkpoint after N updates (the step `show` lists; src/shared/stepConvention.ts).
 *
 * Not here: a run's metrics (`export`), the checkpoint format (policies/hf.ts).
 * Tests: test/engine/hfRun.test.ts (a per-role run's searcher, as an adapter and merged),
 * test/cli/exportFiles.test.ts (destinations).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { labRoot, resolveRunConfig } from '../core/config';
import { checkpointUpdates, pickCheckpoint } from '../shared/stepConvention';
import { legacyRunsRootFor, runsRootFor } from '../core/host/paths';
import { readHfConfig } from '../core/models/hf/config';
import { readLoraAdapter } from '../core/models/hf/loraFiles';
import { openTensorSource } from '../core/models/hf/safetensorsFile';
import { saveLoraAdapter } from '../core/models/hf/saveAdapter';
import { checkFolderDestination, saveMergedModel } from '../core/models/hf/saveModel';
import { POLICY_FILE } from '../core/policies/hf';
import { hfModelDir } from '../core/policies/registry';
import { POLICIES_FILE } from '../core/train/checkpoints';
import { isInside, realPathOfNew } from '../core/util/fsErrors';
import type { ParsedArgs } from './args';
import { getRunOrThrow, openLabForReading, runArg } from './lab';

export const EXPORT_MODEL_OPTIONS = ['db', 'step', 'role', 'out'];
export const EXPORT_MODEL_FLAGS = ['merge'];

interface Located {
  dir: string;
  step: number;
  policyId: string;
  kind: 'lora' | 'full';
  base: string;
}

/**
 * Refuses a destination the lab may remove or replace: inside the database's run folders (the
 * current `<db>.runs/` and the older `runs/` beside it) or the checkpoint being exported, after
 * resolving symbolic links on both sides; and a symbolic link or an occupied folder at it.
 */
export function checkExportDestination(dest: string, dbPath: string, checkpointDir?: string): void {
  const target = resolve(dest);
  const real = realPathOfNew(target);
  const lab = [
    { root: runsRootFor(dbPath), what: `the run folders of ${resolve(dbPath)}` },
    { root: legacyRunsRootFor(dbPath), what: `the run folders of ${resolve(dbPath)} (older layout)` },
    ...(checkpointDir ? [{ root: checkpointDir, what: 'the checkpoint being exported' }] : []),
  ];
  for (const { root, what } of lab) {
    const realRoot = realPathOfNew(root);
    if (isInside(real, realRoot) || isInside(target, resolve(root)))
      throw new Error(`${target}: is inside ${what} (${realRoot}), where the lab removes and replaces checkpoints; export to a folder outside it`);
  }
  checkFolderDestination(target);
}

/** The checkpoint folder of one policy of a run, and the run's base model folder. */
function locate(args: ParsedArgs, dest: string): Located {
  const runId = runArg(args, 'export-model');
  const { store, dbPath } = openLabForReading(args);
  try {
    const run = getRunOrThrow(store, runId, dbPath);
    checkExportDestination(dest, dbPath);
    // --step N: the checkpoint after N updates (src/shared/stepConvention.ts).
    const ckpt = pickCheckpoint(store.checkpoints(runId), args.options.step, `run ${runId}`, '--step');
    const dir = isAbsolute(ckpt.path) ? ckpt.path : resolve(dirname(dbPath), ckpt.path);
    if (!existsSync(dir)) throw new Error(`the checkpoint of step ${checkpointUpdates(ckpt.step)} of run ${runId} is missing on disk: ${dir}`);
    const listing = join(dir, POLICIES_FILE);
    const meta = existsSync(listing) ? (JSON.parse(readFileSync(listing, 'utf8')) as { modelKind?: string; policies?: string[] }) : { modelKind: 'lab' };
    if (meta.modelKind !== 'hf')
      throw new Error(
        `run ${runId} trained the lab's former character Transformer (before the one model family): its checkpoint in ${dir} is in that model's own format, ` +
          'which transformers cannot open and this version no longer reads; a new run of the same preset trains a Hugging Face folder that export-model writes',
      );
    const ids = meta.policies ?? [];
    const role = args.options.role;
    // A shared run's one policy plays every role: a --role would name something the run does not have.
    if (ids.length === 1 && role !== undefined && role !== ids[0])
      throw new Error(`run ${runId} has one shared policy (it plays every role): leave out --role "${role}"; the export is that policy`);
    const policyId = ids.length === 1 ? ids[0] : role;
    if (!policyId || !ids.includes(policyId))
      throw new Error(`run ${runId} has one policy per role: name one with --role (${ids.join(', ')})${role ? `; "${role}" is not one` : ''}`);
    const policyFile = join(dir, policyId, POLICY_FILE);
    const kind = (JSON.parse(readFileSync(policyFile, 'utf8')) as { kind?: string }).kind === 'full' ? 'full' : 'lora';
    const config = resolveRunConfig(run.config);
    // policies.init null: the run trained a fresh lab folder (models/hf/labCache.ts), rewritten identically if the cache was cleared.
    const base = hfModelDir(config, labRoot());
    if (kind === 'lora' && !existsSync(base)) throw new Error(`the base model of run ${runId} is gone: ${base} (the adapter needs it; put the folder back)`);
    checkExportDestination(dest, dbPath, dir);
    return { dir: join(dir, policyId), step: checkpointUpdates(ckpt.step), policyId, kind, base };
  } finally {
    store.close();
  }
}

export async function exportModelCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const dest = args.options.out;
  if (!dest) throw new Error('export-model needs --out DIR (a new or empty folder)');
  const merge = args.flags.has('merge');
  const at = locate(args, dest);
  const target = resolve(dest);
  const what = `policy "${at.policyId}" of the checkpoint of step ${at.step} (after ${at.step} update${at.step === 1 ? '' : 's'})`;
  if (at.kind === 'lora' && !merge) {
    const config = readHfConfig(at.base);
    const adapter = readLoraAdapter(at.dir, config);
    saveLoraAdapter(target, { config: adapter.config, pairs: adapter.pairs, baseModel: at.base });
    out(`wrote the LoRA adapter of ${what} to ${target} (peft: PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained("${at.base}"), "${target}"))`);
    return;
  }
  // A merged LoRA policy reads the base and folds the adapter in; a full fine-tune is already a model folder.
  const sourceDir = at.kind === 'lora' ? at.base : at.dir;
  const config = readHfConfig(sourceDir);
  const lora = at.kind === 'lora' ? readLoraAdapter(at.dir, config).pairs : undefined;
  const source = openTensorSource(sourceDir);
  try {
    const saved = saveMergedModel(target, { sourceDir, config, source, lora, dtype: 'BF16' });
    out(
      `wrote ${what} as a model folder in bf16 to ${saved.dir}: ${saved.files.join(', ')} (transformers: AutoModelForCausalLM.from_pretrained("${saved.dir}"))`,
    );
  } finally {
    source.close?.();
  }
}
