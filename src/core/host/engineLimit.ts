/**
 * How many engines one lab host (a LabService: `srpo-lab serve` or the desktop app) runs at once;
 * further starts wait in its queue, shown as `queued`. Default: one engine per NVIDIA GPU, one
 * on a machine without one (two engines on one device only share it: each step gets slower and
 * both compete for memory). The LabService option `maxEngines` overrides the environment
 * variable SRPO_LAB_MAX_ENGINES, which overrides the default.
 *
 * Not here: the queue itself (runControl.ts). The CLI's `train`/`resume` are not queued: each is
 * one engine the user started by hand in the foreground. This file reads /proc (Node only).
 * Tests: test/core/host/engineQueue.test.ts.
 */
import { readdirSync } from 'node:fs';
import { nvidiaDriverPresent } from '../models/backend';

/** NVIDIA GPUs the driver lists under /proc/driver/nvidia/gpus (Linux); 1 if only a device node is seen; 0 without a driver. */
export function nvidiaGpuCount(): number {
  try {
    const n = readdirSync('/proc/driver/nvidia/gpus').length;
    if (n > 0) return n;
  } catch {
    // No listing: fall back to whether a driver is present at all.
  }
  return nvidiaDriverPresent() ? 1 : 0;
}

/** One engine per GPU, one without a GPU. */
export function defaultEngineLimit(gpus: number = nvidiaGpuCount()): number {
  return Math.max(1, gpus);
}

/** The limit to use: the option, else SRPO_LAB_MAX_ENGINES, else the default. Throws on a value that is not an integer >= 1. */
export function engineLimit(option?: number, env: NodeJS.ProcessEnv = process.env, gpus?: number): number {
  if (option !== undefined) {
    if (!Number.isInteger(option) || option < 1) throw new Error(`LabService option maxEngines = ${option}: expected an integer >= 1`);
    return option;
  }
  const v = env.SRPO_LAB_MAX_ENGINES?.trim();
  if (v) {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`SRPO_LAB_MAX_ENGINES="${v}" is not an integer >= 1 (engines one lab host runs at once)`);
    return n;
  }
  return defaultEngineLimit(gpus);
}
