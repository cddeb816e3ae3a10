/**
 * What the lab is and what exists of it so far: shown by the renderer shell, browser-safe.
 * Keep this list true: it is the UI's honest statement of the features that are built.
 */
export const LAB_NAME = 'SRPO Lab';

export const LAB_SUMMARY =
  'A desktop lab for training multi-agent LLM systems with Setwise Relative Policy Optimization: ' +
  'the outputs several agents produce together for one environment transition are one action, ' +
  'with one set ratio, one group-relative advantage and one clip.';

/** Parts of the lab that exist in this build, each with where to find it. */
export const BUILT_FEATURES: readonly { name: string; where: string }[] = [
  { name: 'SRPO objective library (srpo, grpo_token, grpo_seq, gspo, drmas) with a float64 reference', where: 'src/core/srpo' },
  { name: 'Compute-backend selection (tfjs-node-gpu > tfjs-node > wasm > cpu)', where: 'src/core/models/backend.ts' },
];

/** Parts of the lab that do not exist yet, so that the shell never pretends they do. */
export const PLANNED_FEATURES: readonly string[] = [
  'Policy models, sampling and checkpoints',
  'Multi-agent workflows, rollouts and evaluation',
  'Trainer, run store and the srpo-lab command',
  'Run setup, live curves, trace viewer, comparison and reports',
];
