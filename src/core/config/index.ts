/** Run configuration and presets: public surface. */
export { runConfigSchema, resolveRunConfig, setPath, type RunConfig, type RunConfigInput } from './runConfig';
export { PRESETS, PRESET_NAMES, WARMSTART_DIR, mergeConfig, presetConfig, presetInput, type PresetName } from './presets';
