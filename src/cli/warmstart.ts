/**
 * `srpo-lab warmstart --preset NAME --out DIR [--epochs N] [--seed N] [--episodes N]`: produces a
 * preset's warm start, a Hugging Face folder of its lab shape (src/core/train/warmstart.ts:
 * supervised training on demonstrations) for `policies.init` to point at; the presets expect
 * resources/warmstart/<workflow>-tiny.
 * Runs in this process. Tests: test/core/train/warmstart.test.ts (the work), test/cli (errors).
 */
import { resolve } from 'node:path';
import { PRESET_NAMES } from '../core/config';
import { initBackend } from '../core/models/backend';
import { produceWarmStart } from '../core/train/warmstart';
import type { ParsedArgs } from './args';
import { num } from './lab';

function intOption(args: ParsedArgs, name: string): number | undefined {
  const v = args.options[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} expects a non-negative integer, got ${v}`);
  return n;
}

export async function warmstartCommand(args: ParsedArgs, out: (line: string) => void): Promise<void> {
  const preset = args.options.preset;
  const dir = args.options.out;
  if (!preset) throw new Error(`warmstart needs --preset NAME; presets: ${PRESET_NAMES.join(', ')}`);
  if (!dir) throw new Error('warmstart needs --out DIR (the presets read resources/warmstart/<workflow>-tiny)');
  const epochs = intOption(args, 'epochs');
  const seed = intOption(args, 'seed');
  const episodes = intOption(args, 'episodes');
  const backend = await initBackend({ requested: args.options.backend as never });
  out(`backend ${backend.name}`);
  const t0 = performance.now();
  const result = await produceWarmStart({ preset, out: dir, epochs, seed, episodes, log: out });
  out(
    `wrote ${result.dir} in ${num((performance.now() - t0) / 1000, 1)} s (${result.demonstrations} demonstrations, ${result.reports.length} epoch reports); use it with --set policies.init=${resolve(result.dir)}`,
  );
}
