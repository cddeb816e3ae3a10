/** Run configuration and presets: public surface. */
export { runConfigSchema, resolveRunConfig, setPath, type RunConfig, type RunConfigInput } from './runConfig';
export { DEFAULT_WARM_START, PRESETS, PRESET_NAMES, WARMSTART_DIR, mergeConfig, presetConfig, presetInput, warmStartRecipe, type PresetName, type WarmStartRecipe } from './presets';
