/**
 * Two real-model training options through the engine process, the store and `export-model`, on the
 * tiny transformers-made Qwen3 (as hfRun.test.ts runs LoRA): per-role FULL fine-tuning (one
 * trainable copy of the model per role over one frozen base; `export-model --role R` writes that
 * role's complete model folder, and only the roles that acted differ from the base) and LoRA
 * dropout (the run completes and the exported adapter says lora_dropout). The in-process checks
 * (which weights move, resume, the memory refusal, the masks): test/core/train/hfPerRoleFull.test.ts,
 * hfDropout.test.ts, test/core/models/hf/loraDropout.test.ts.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands';
import { loadHfModel } from '../../src/core/models/hf/load';
import { hfRunConfig, LORA, MIXED_MATH, tinyQwenFolder } from '../core/train/hfFixture';
import { newRun, startRecorded, tempLab } from './helpers';

let dir: string;
beforeAll(() => {
  dir = tinyQwenFolder();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), tty: null, launcher: null as never, onInterrupt: () => () => undefined };
  const code = await runCli(argv, io, (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every weight of a model folder, as float32 arrays by checkpoint name. */
function weightsOf(folder: string): Map<string, Float32Array> {
  const m = loadHfModel(folder);
  try {
    return new Map([...m.model.params].map(([n, v]) => [n, Float32Array.from(v.dataSync())]));
  } finally {
    m.dispose();
  }
}

describe('Hugging Face runs through the engine: per-role full fine-tuning, LoRA dropout', () => {
  it("per-role full fine-tuning: 2 steps, then export-model --role writes that role's complete model folder", async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, hfRunConfig(dir, { steps: 2, checkpointEvery: 2, policies: { sharing: 'per-role', adapter: null }, workflow: MIXED_MATH }));
    const end = await startRecorded(store, dbPath, runId, 'start').done;
    expect(end.status, end.error ?? '').toBe('completed');
    const ckpt = store.checkpoints(runId).at(-1)!;
    expect(JSON.parse(readFileSync(join(ckpt.path, 'solver', 'policy.json'), 'utf8')).kind).toBe('full');
    const base = weightsOf(dir);
    const exported = new Map<string, Map<string, Float32Array>>();
    for (const role of ['solver', 'router']) {
      const out = join(dbPath, '..', `${role}-model`);
      const r = await cli(['export-model', String(runId), '--db', dbPath, '--role', role, '--out', out]);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(new RegExp(`policy "${role}" .* as a model folder in bf16`));
      expect(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')).dtype).toBe('bfloat16');
      expect(existsSync(join(out, 'tokenizer.json'))).toBe(true);
      exported.set(role, weightsOf(out));
    }
    const differs = (w: Map<string, Float32Array>) => [...w].filter(([n, v]) => v.some((x, i) => x !== base.get(n)![i])).length;
    expect(differs(exported.get('solver')!)).toBeGreaterThan(base.size / 2); // the solver acted and was trained
    expect(differs(exported.get('router')!)).toBe(0); // math with K drawn from a list has no router: its copy is still the base (bf16 -> f32 -> bf16 is exact)
    const none = await cli(['export-model', String(runId), '--db', dbPath, '--out', join(dbPath, '..', 'x')]);
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/one policy per role: name one with --role/);
    store.close();
  }, 600_000);

  it('LoRA dropout: the run completes and the exported peft adapter says lora_dropout', async () => {
    const { dbPath, store } = tempLab();
    const runId = newRun(store, hfRunConfig(dir, { steps: 2, checkpointEvery: 2, policies: { adapter: { ...LORA, dropout: 0.1 } }, workflow: MIXED_MATH }));
    const end = await startRecorded(store, dbPath, runId, 'start').done;
    expect(end.status, end.error ?? '').toBe('completed');
    expect(Math.max(...store.metricSeries(runId, 'grad/norm').map((p) => p.value ?? 0))).toBeGreaterThan(0);
    const out = join(dbPath, '..', 'adapter');
    const r = await cli(['export-model', String(runId), '--db', dbPath, '--out', out]);
    expect(r.code, r.err).toBe(0);
    const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({ peft_type: 'LORA', lora_dropout: 0.1, r: LORA.r, lora_alpha: LORA.alpha });
    store.close();
  }, 600_000);
});
