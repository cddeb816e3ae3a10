/**
 * What the lab is and what exists of it so far: shown by the renderer's About view, browser-safe.
 * Keep this list true: it is the UI's honest statement of the features that are built.
 * test/shared/about.test.ts checks that every `where` exists and that nothing listed as not built
 * is a feature this list (or the code) already has.
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
  { name: 'Policy models, sampling, checkpoints and warm starts', where: 'src/core/models' },
  { name: 'Multi-agent workflows, rollouts and evaluation', where: 'src/core/workflows, src/core/rollout, src/core/eval' },
  { name: 'Trainer, run store and the srpo-lab command', where: 'src/core/train, src/core/store, src/cli' },
  { name: 'One API contract (LabApi) and its implementation over the store and engines', where: 'src/shared/api.ts, src/core/host/labService.ts' },
  { name: 'Web mode: srpo-lab serve (HTTP + WebSocket on 127.0.0.1, token)', where: 'src/server' },
  { name: 'Runs, new run, live dashboard, trace viewer, compare and reports', where: 'src/renderer' },
  {
    name: 'Trace viewer: per-token log-ratios (log π_cur − log π_old) on every member token, the set ratio, clip and advantage explained on each event',
    where: 'src/renderer/src/components/TraceViewerEvent.vue, src/core/store/traces.ts',
  },
  { name: 'Desktop app: engines in Electron utility processes, the lab service in a worker thread', where: 'src/main, src/core/host/labWorker.ts' },
  {
    name: 'Hugging Face models (Qwen3, Qwen2.5, Llama 3) in lab runs: LoRA or full fine-tuning, evaluation, export as a peft adapter or a merged model',
    where: 'src/core/models/hf, src/core/policies/hf.ts, src/cli/model.ts, src/cli/exportModel.ts',
  },
  {
    name: "Traces of evaluation episodes: prompts, outputs, parse results and rewards of the stored queries (the trace viewer's split filter)",
    where: 'src/core/train/evalEpisodes.ts, src/core/store/traces.ts',
  },
];

/** Parts of the lab that do not exist yet, so that the shell never pretends they do. */
export const PLANNED_FEATURES: readonly string[] = [
  'A run on a CUDA GPU checked end to end: the GPU backend (tfjs-node-gpu) is wired and picked first, but every test so far ran on CPU backends',
];
