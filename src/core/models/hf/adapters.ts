/**
 * Named LoRA adapters over one frozen base of the Hugging Face family (model.ts owns one set and
 * forwards its adapter methods here): any number of adapters by name (per-role policies of the
 * multi-agent regimes; the shared policy is one adapter), each a map from adapted weight name to
 * its factors a = A^T [in, r], b = B^T [r, out] and scale, as peft defines LoRA:
 * y = x W + scale * (x A^T) B^T. `add` initialises as peft's LoraLayer.reset_lora_parameters
 * (model.ts header: A Kaiming-uniform with bound 1/sqrt(in), B zero, seeded per (seed, layer,
 * module)); `load` puts peft pairs in memory, new or overwritten in place (optimizer state stays
 * bound); `read` gives them back in peft's layout.
 * Not here: the forward that applies them (model.ts `proj`, ./decode.ts), LoRA dropout
 * (./loraDropout.ts), adapter folders on disk (loraFiles.ts, saveAdapter.ts).
 * Tests: test/core/models/hf/adapters.test.ts, model.test.ts (LoRA against the reference),
 * leaks.test.ts (a failed load leaves nothing).
 */
import * as tf from '@tensorflow/tfjs';
import { mixSeed, mulberry32 } from '../random';
import { transpose2d } from './layers';
import { checkDropoutRate, type LoraInputDropout } from './loraDropout';
import { HF_LINEAR_MODULES } from './memory';
import type { HfModelConfig, LoraPair } from './types';

/** The adapter an entry point runs: a name, null for the base alone, undefined for 'default' when it exists (else the base). */
export type HfAdapterChoice = string | null | undefined;

/** The adapter `lora` of `fromSource` becomes, and the one entry points use when given no adapter. */
export const DEFAULT_ADAPTER = 'default';

/** A new LoRA adapter, as peft's LoraConfig (the fields `addAdapter` reads). */
export interface HfAdapterConfig {
  r: number; // rank, integer >= 1 (8-64 typical)
  alpha: number; // lora_alpha > 0: scale alpha / r (or alpha / sqrt(r) with rslora)
  rslora: boolean; // use_rslora
  targetModules: string[]; // peft target_modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, or 'all-linear'
  dropout: number; // lora_dropout in [0, 1): training forwards only (./loraDropout.ts)
}

/** One adapted linear: a = A^T [in, r], b = B^T [r, out]; drop: one forward's input dropout (./loraDropout.ts). */
export type Lora = { a: tf.Variable; b: tf.Variable; scale: number; drop?: LoraInputDropout };
export type Adapter = ReadonlyMap<string, Lora>; // by adapted weight name
export const NO_ADAPTER: Adapter = new Map();

/** The decoder-layer block each linear module sits in (its checkpoint name is model.layers.N.<block>.<module>.weight). */
const MODULE_BLOCK = {
  q_proj: 'self_attn',
  k_proj: 'self_attn',
  v_proj: 'self_attn',
  o_proj: 'self_attn',
  gate_proj: 'mlp',
  up_proj: 'mlp',
  down_proj: 'mlp',
} satisfies Record<(typeof HF_LINEAR_MODULES)[number], 'self_attn' | 'mlp'>;

/** The adapters of one model: its base weights (read for shapes, never changed) and the adapter map. */
export class HfAdapters {
  private readonly map = new Map<string, Map<string, Lora>>();

  constructor(
    private readonly config: HfModelConfig,
    private readonly params: ReadonlyMap<string, tf.Variable>,
    /** Whether new factors are trainable (the model's `adaptersTrainable`). */
    private readonly trainable: boolean,
    /** Variable-name prefix of the model (`hf<id>/`): names stay unique across models. */
    private readonly varPrefix: string,
  ) {}

  /** The 'default' adapter's factors (empty without one). */
  get defaultAdapter(): Adapter {
    return this.map.get(DEFAULT_ADAPTER) ?? NO_ADAPTER;
  }

  has(name: string): boolean {
    return this.map.has(name);
  }

  /** Every adapter's variables, adapters in the order they were added. */
  allVariables(): tf.Variable[] {
    return this.names().flatMap((n) => this.variables(n));
  }

  /** Frees every adapter's variables. */
  dispose(): void {
    for (const a of this.map.values()) for (const l of a.values()) tf.dispose([l.a, l.b]);
    this.map.clear();
  }

  /** Names of the adapters in memory, in the order they were added. */
  names(): string[] {
    return [...this.map.keys()];
  }

  /**
   * Adds a new adapter initialised as peft does (header: A Kaiming-uniform with bound
   * 1/sqrt(in), B zero, so it starts equal to the base), on `cfg.targetModules` of every layer.
   * Errors: a name in use, a base that is itself trainable, a module this model lacks (naming it
   * and the valid ones), r/alpha out of range, dropout outside [0, 1).
   */
  add(name: string, cfg: HfAdapterConfig, seed: number): void {
    const where = `HfModel.addAdapter("${name}")`;
    this.checkNewAdapterName(name, where);
    if (!(Number.isInteger(cfg.r) && cfg.r >= 1)) throw new Error(`${where}: r ${cfg.r} must be an integer >= 1`);
    if (!(Number.isFinite(cfg.alpha) && cfg.alpha > 0)) throw new Error(`${where}: alpha ${cfg.alpha} must be a positive number`);
    checkDropoutRate(cfg.dropout, where);
    const modules = cfg.targetModules.includes('all-linear') ? [...HF_LINEAR_MODULES] : [...new Set(cfg.targetModules)];
    if (modules.length === 0) throw new Error(`${where}: targetModules is empty; valid: ${HF_LINEAR_MODULES.join(', ')} (or all-linear)`);
    for (const m of modules) {
      if (!Object.hasOwn(MODULE_BLOCK, m)) {
        throw new Error(
          `${where}: target module "${m}" is not a linear of this ${this.config.architecture} model; valid: ${HF_LINEAR_MODULES.join(', ')} (or all-linear)`,
        );
      }
    }
    const { r } = cfg;
    const scale = cfg.rslora ? cfg.alpha / Math.sqrt(r) : cfg.alpha / r;
    const pairs: LoraPair[] = [];
    for (let l = 0; l < this.config.numLayers; l++) {
      HF_LINEAR_MODULES.forEach((m, mi) => {
        if (!modules.includes(m)) return;
        const target = `model.layers.${l}.${MODULE_BLOCK[m]}.${m}.weight`;
        const w = this.params.get(target);
        if (!w) throw new Error(`${where}: this model has no weight "${target}"`);
        const [inF, out] = w.shape as [number, number]; // stored [in, out]
        const bound = 1 / Math.sqrt(inF); // kaiming_uniform_(a = sqrt(5)) on [r, in]
        const rand = mulberry32(mixSeed(seed, l, mi));
        const a = new Float32Array(r * inF);
        for (let k = 0; k < a.length; k++) a[k] = (2 * rand() - 1) * bound;
        pairs.push({ target, a, b: new Float32Array(out * r), r, inFeatures: inF, outFeatures: out, scale });
      });
    }
    this.load(name, pairs);
  }

  /**
   * Puts peft LoRA pairs (readLoraAdapter's layout: A [r, in], B [out, r]) in memory as adapter
   * `name`. A new name creates its variables (trainable as `trainable`); an existing name
   * is overwritten in place (same targets and shapes required), so optimizer state bound to its
   * variables stays valid (resume). Nothing changes on an error.
   */
  load(name: string, pairs: readonly LoraPair[]): void {
    const where = `HfModel.loadAdapter("${name}")`;
    if (pairs.length === 0) throw new Error(`${where}: no LoRA pairs`);
    const seen = new Set<string>();
    for (const p of pairs) {
      const w = this.params.get(p.target);
      if (!w || w.shape.length !== 2 || !p.target.endsWith('_proj.weight')) {
        throw new Error(`LoRA: target "${p.target}" is not a linear weight of this ${this.config.architecture} model`);
      }
      if (seen.has(p.target)) throw new Error(`LoRA: target "${p.target}" is adapted twice`);
      seen.add(p.target);
      const [inF, out] = w.shape as [number, number];
      if (p.inFeatures !== inF || p.outFeatures !== out || p.a.length !== p.r * inF || p.b.length !== out * p.r) {
        throw new Error(
          `LoRA: "${p.target}" is [${out}, ${inF}] in the base, the adapter has A [${p.r}, ${p.inFeatures}] (${p.a.length} values), B [${p.outFeatures}, ${p.r}] (${p.b.length} values): made for another base?`,
        );
      }
      if (!Number.isFinite(p.scale)) throw new Error(`LoRA: "${p.target}" has scale ${p.scale}`);
    }
    const existing = this.map.get(name);
    if (existing) {
      const same = existing.size === pairs.length && pairs.every((p) => existing.get(p.target)?.a.shape[1] === p.r);
      if (!same) throw new Error(`${where}: adapter "${name}" exists with other targets or ranks; removeAdapter("${name}") first`);
      tf.tidy(() => {
        for (const p of pairs) {
          const f = existing.get(p.target)!;
          f.a.assign(tf.tensor2d(transpose2d(p.a, p.r, p.inFeatures), [p.inFeatures, p.r]));
          f.b.assign(tf.tensor2d(transpose2d(p.b, p.outFeatures, p.r), [p.r, p.outFeatures]));
          f.scale = p.scale;
        }
      });
      return;
    }
    this.checkNewAdapterName(name, where);
    const prefix = name === DEFAULT_ADAPTER ? '' : `${name}/`; // 'default' keeps the single-adapter variable names
    const created = new Map<string, Lora>();
    const variable = (data: Float32Array, shape: [number, number], label: string) =>
      tf.tidy(() => tf.variable(tf.tensor2d(data, shape), this.trainable, `${this.varPrefix}${prefix}${label}`));
    try {
      for (const p of pairs) {
        const a = variable(transpose2d(p.a, p.r, p.inFeatures), [p.inFeatures, p.r], `${p.target}.lora_A`); // A^T [in, r]
        let b: tf.Variable;
        try {
          b = variable(transpose2d(p.b, p.outFeatures, p.r), [p.r, p.outFeatures], `${p.target}.lora_B`); // B^T [r, out]
        } catch (err) {
          a.dispose();
          throw err;
        }
        created.set(p.target, { a, b, scale: p.scale });
      }
    } catch (err) {
      for (const f of created.values()) tf.dispose([f.a, f.b]);
      throw err;
    }
    this.map.set(name, created);
  }

  /** An adapter's factors in peft's layout (A [r, in], B [out, r]), to save it. A read-back (waits for the device): call outside tf.tidy. */
  read(name: string): LoraPair[] {
    return [...this.adapterNamed(name, 'readAdapter')].map(([target, l]) => {
      const [inF, r] = l.a.shape as [number, number];
      const out = (l.b.shape as [number, number])[1];
      const a = transpose2d(l.a.dataSync() as Float32Array, inF, r); // A^T [in, r] -> A [r, in]
      const b = transpose2d(l.b.dataSync() as Float32Array, r, out); // B^T [r, out] -> B [out, r]
      return { target, a, b, r, inFeatures: inF, outFeatures: out, scale: l.scale };
    });
  }

  /** An adapter's variables (A^T, B^T per target, in target order): the optimizer's list for that role. */
  variables(name: string): tf.Variable[] {
    return [...this.adapterNamed(name, 'adapterVariables').values()].flatMap((l) => [l.a, l.b]);
  }

  /** Frees an adapter's variables. */
  remove(name: string): void {
    const a = this.adapterNamed(name, 'removeAdapter');
    for (const l of a.values()) tf.dispose([l.a, l.b]);
    this.map.delete(name);
  }

  private checkNewAdapterName(name: string, where: string): void {
    if (typeof name !== 'string' || name.length === 0 || name.includes('/')) throw new Error(`${where}: an adapter name is a non-empty string without "/"`);
    if (this.map.has(name)) throw new Error(`${where}: adapter "${name}" exists (adapters: ${this.names().join(', ')})`);
    if ([...this.params.values()].some((v) => v.trainable)) {
      throw new Error(`${where}: the base weights are trainable (full fine-tuning); load with trainable: 'lora' to train adapters over a frozen base`);
    }
  }

  private adapterNamed(name: string, where: string): Adapter {
    const a = this.map.get(name);
    if (!a) throw new Error(`HfModel.${where}: no adapter "${name}"; adapters: ${this.names().join(', ') || '(none)'}`);
    return a;
  }

  /** The adapter an entry point runs (see HfAdapterChoice). */
  of(choice: HfAdapterChoice): Adapter | null {
    if (choice === null) return null;
    if (choice === undefined) return this.map.get(DEFAULT_ADAPTER) ?? null;
    return this.adapterNamed(choice, 'forward');
  }
}
