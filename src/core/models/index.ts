/**
 * The model library: public surface. A character tokenizer, a typed model config with presets,
 * a decoder-only transformer fast on tfjs-wasm, teacher-forced log-probs, a KV-cache sampler,
 * policy sets, safetensors checkpoints and the supervised warm start. Backend selection is in
 * backend.ts. Tests: test/core/models/.
 */
export { initBackend, currentBackend, backendFromEnv, BACKEND_NAMES } from './backend';
export type { BackendName, BackendReport, BackendRequest } from './backend';
export { CharTokenizer, ROLES, SPECIAL_TOKENS, CHARACTERS, CHAR_VOCAB_SIZE } from './tokenizer';
export type { Role, SpecialToken, TokenizerJSON } from './tokenizer';
export {
  MODEL_PRESETS,
  MODEL_PRESET_NAMES,
  modelConfig,
  modelConfigSchema,
  resolveModelConfig,
  parameterShapes,
  parameterCount,
  matmulParameterCount,
  mlpWidth,
} from './config';
export type { ModelConfig, ModelConfigInput, ModelPresetName } from './config';
export { Transformer, readParameters, MASKED } from './transformer';
export type { KVCache, StepOutput } from './transformer';
export { scoreCompletions, scoreCompletionsData } from './logprobs';
export type { CompletionScores, ScoredPair, ScoreOptions } from './logprobs';
export { sample, sampleToken, DECODERS, DECODE_MODES, STOP_REASONS } from './sampler';
export type { DecodeMode, SampledRow, SampleOptions, StopReason } from './sampler';
export { PolicySet, POLICY_SET_KINDS, POLICY_SET_LAYOUTS } from './policySet';
export type { Policy, PolicySetKind } from './policySet';
export { saveCheckpoint, loadCheckpoint, readCheckpoint, CHECKPOINT_FILES } from './checkpoint';
export type { LoadedCheckpoint } from './checkpoint';
export { encodeSafetensors, decodeSafetensors, SAFETENSORS_DTYPES } from './safetensors';
export type { DecodedSafetensors, NamedArray, SafetensorsDtype } from './safetensors';
export { warmStart, trainStep, parseDemonstrations, loadDemonstrations, encodeDemonstration } from './warmstart';
export type { Demonstration, EpochReport, WarmStartOptions } from './warmstart';
export { mulberry32, mixSeed, normalArray, permutation } from './random';
