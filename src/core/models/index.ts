/**
 * The model library: public surface. The backend choice (backend.ts), the lab's character
 * vocabulary and roles (vocab.ts), the lab's model shape presets (config.ts), policy sharing
 * (sharing.ts), safetensors, seeded randomness and token choice. The one model family itself is
 * models/hf (load, score, sample, LoRA, save), imported from there.
 * Tests: test/core/models/.
 */
export { initBackend, currentBackend, backendFromEnv, BACKEND_NAMES } from './backend';
export type { BackendName, BackendReport, BackendRequest } from './backend';
export { ROLES, SPECIAL_TOKENS, CHARACTERS, CHAR_VOCAB_SIZE } from './vocab';
export type { Role, SpecialToken } from './vocab';
export { MODEL_PRESETS, MODEL_PRESET_NAMES, modelConfig, modelConfigSchema, resolveModelConfig } from './config';
export type { ModelConfig, ModelConfigInput, ModelPresetName } from './config';
export { POLICY_SET_KINDS, POLICY_SET_LAYOUTS } from './sharing';
export type { PolicySetKind } from './sharing';
export { encodeSafetensors, decodeSafetensors, SAFETENSORS_DTYPES } from './safetensors';
export type { DecodedSafetensors, NamedArray, SafetensorsDtype } from './safetensors';
export { mulberry32, mixSeed, normalArray, permutation } from './random';
