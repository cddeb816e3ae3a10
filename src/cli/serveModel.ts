/**
 * `srpo-lab serve-model (--model DIR [--adapter DIR] | --run N [--step S] [--role R]) [--port P]`:
 * the external-agent endpoint (src/core/external, docs/EXTERNAL_AGENTS.md) without training, to
 * evaluate a model or a run's checkpoint with any OpenAI-compatible harness. Prints the URL and
 * the key, answers `/v1/chat/completions`, `/v1/completions` and `/v1/models` until Ctrl-C, with
 * each request's own sampling settings (temperature, top_p, max_tokens up to `--max-tokens`,
 * default the run's rollout.maxNewTokens); nothing is recorded.
 *
 * Models: `--model DIR` is a Hugging Face model folder (with `--adapter DIR`, a peft LoRA adapter
 * over it) or a lab checkpoint folder; `--run N` is that run's checkpoint (the latest, or the one
 * of `--step S`, the checkpoint after S updates as `show` lists it) with the run's own config. The names served are the policy roles (each played by
 * its policy), or only `--role R`.
 *
 * Tests: test/external/serveModel.test.ts.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { labRoot, presetConfig, resolveRunConfig, type RunConfig } from '../core/config';
import { ExternalEndpoint } from '../core/external/server';
import { initBackend } from '../core/models/backend';
import { readHfConfig } from '../core/models/hf/config';
import { readLoraAdapter } from '../core/models/hf/loraFiles';
import type { HfPolicies } from '../core/policies/hf';
import { openPolicies } from '../core/policies/registry';
import type { Policies } from '../core/policies/types';
import { LabStore } from '../core/store';
import { POLICY_ROLES, type PolicyRole } from '../core/workflows/types';
import type { ParsedArgs } from './args';
import type { CliIO } from './io';
import { checkpointUpdates, pickCheckpoint } from '../shared/stepConvention';

export const SERVE_MODEL_OPTIONS = ['db', 'model', 'adapter', 'run', 'step', 'role', 'port', 'max-tokens'];

interface Served {
  config: RunConfig;
  policies: Policies;
  what: string;
}

function positiveInt(v: string, flag: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`${flag} "${v}" must be a whole number >= ${min}`);
  return n;
}

/** A model folder (Hugging Face, optionally with a peft adapter, or a lab checkpoint). */
function fromFolder(args: ParsedArgs): Served {
  const dir = resolve(args.options.model);
  if (!existsSync(dir)) throw new Error(`--model ${dir}: no such folder`);
  const adapterDir = args.options.adapter === undefined ? null : resolve(args.options.adapter);
  const lora = adapterDir ? readLoraAdapter(adapterDir, readHfConfig(dir)) : null;
  const adapter = lora
    ? { kind: 'lora', r: lora.config.r, alpha: lora.config.alpha, rslora: lora.config.rslora, targetModules: lora.config.targetModules, dropout: 0 }
    : null;
  const config = presetConfig('math-quick', { policies: { init: dir, sharing: 'shared', adapter } });
  const policies = openPolicies(config, { baseDir: process.cwd(), withReference: false });
  if (lora) (policies as HfPolicies).model.loadAdapter('shared', lora.pairs);
  return { config, policies, what: `${dir}${adapterDir ? ` with the adapter ${adapterDir}` : ''}` };
}

/** A run's checkpoint, with the run's own config. */
function fromRun(args: ParsedArgs): Served {
  const runId = positiveInt(args.options.run, '--run');
  const dbPath = resolve(args.options.db ?? 'lab.db');
  const store = LabStore.open(dbPath);
  let config: RunConfig;
  let dir: string;
  let step: number;
  try {
    const run = store.getRun(runId);
    if (!run) throw new Error(`no run ${runId} in ${dbPath}`);
    // --step S: the checkpoint after S updates (src/shared/stepConvention.ts).
    const ckpt = pickCheckpoint(store.checkpoints(runId), args.options.step, `run ${runId}`, '--step');
    step = checkpointUpdates(ckpt.step);
    dir = isAbsolute(ckpt.path) ? ckpt.path : resolve(dirname(dbPath), ckpt.path);
    if (!existsSync(dir)) throw new Error(`the checkpoint of step ${step} of run ${runId} is missing on disk: ${dir}`);
    config = resolveRunConfig(run.config);
  } finally {
    store.close();
  }
  const policies = openPolicies(config, { baseDir: labRoot(), resumeDir: dir, withReference: false });
  return { config, policies, what: `run ${runId}, checkpoint of step ${step} (${dir})` };
}

export async function serveModelCommand(args: ParsedArgs, out: (line: string) => void, io: CliIO): Promise<void> {
  const o = args.options;
  if ((o.model === undefined) === (o.run === undefined)) throw new Error('give exactly one of --model DIR or --run N');
  if (o.adapter !== undefined && o.model === undefined) throw new Error('--adapter goes with --model DIR (a run brings its own adapters)');
  if ((o.step !== undefined || o.role !== undefined) && o.run === undefined) throw new Error('--step and --role go with --run N');
  const port = o.port === undefined ? 0 : Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port "${o.port}" is not a port number (0..65535; 0 picks a free one)`);
  if (o.role !== undefined && !(POLICY_ROLES as readonly string[]).includes(o.role))
    throw new Error(`--role "${o.role}" is not a policy role; valid: ${POLICY_ROLES.join(', ')}`);
  const backend = await initBackend({});
  const served = o.model !== undefined ? fromFolder(args) : fromRun(args);
  const roles: PolicyRole[] = o.role !== undefined ? [o.role as PolicyRole] : [...POLICY_ROLES];
  const maxNewTokens = o['max-tokens'] === undefined ? served.config.rollout.maxNewTokens : positiveInt(o['max-tokens'], '--max-tokens');
  let endpoint: ExternalEndpoint;
  try {
    endpoint = await ExternalEndpoint.start({
      policies: served.policies,
      roles: roles.map((r) => ({ name: r, policyRole: r })),
      sampling: { obeyRequest: true, temperature: 1, topP: 1, maxNewTokens },
      concurrency: 256,
      windowMs: 5,
      maxRows: 64,
      recordCalls: false, // a serve may run for days: no per-call record
      open: true,
      port,
      enableThinking: served.config.workflow.enableThinking ?? undefined,
    });
  } catch (err) {
    served.policies.dispose();
    throw err;
  }
  out(`serving ${served.what}; backend ${backend.name}`);
  out(`OPENAI_BASE_URL=${endpoint.rootUrl}`);
  out(`OPENAI_API_KEY=${endpoint.key}`);
  out(`models: ${roles.join(', ')} (max ${maxNewTokens} new tokens per call); only this machine can connect (127.0.0.1); Ctrl-C stops`);
  await new Promise<void>((done) => {
    const dispose = io.onInterrupt(() => {
      dispose();
      done();
    });
  });
  await endpoint.dispose();
  served.policies.dispose();
}
