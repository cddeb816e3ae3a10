/** Run configuration and presets: public surface. */
export { applySets } from './overrides';
export { runConfigSchema, resolveRunConfig, setPath, type RunConfig, type RunConfigInput } from './runConfig';
export { DEFAULT_WARM_START, PRESETS, PRESET_NAMES, WARMSTART_DIR, warmStartRecipe, type PresetName, type WarmStartRecipe } from './presets';
export { assertPresetModelFolder, mergeConfig, presetConfig, presetInput, presetNeedsModelFolder } from './presetResolve';
export {
  assertRunConfigPaths,
  checkInitPath,
  isHfModelFolder,
  isModelFolder,
  labRoot,
  MODEL_WEIGHT_FILES,
  RUN_CONFIG_PATH_FIELDS,
  runConfigPathErrors,
} from './initPath';
export { assertCrossFieldRules, CROSS_FIELD_RULES, crossFieldProblems, giveWayToModelFolder, type ConfigProblem } from './validateRunConfig';
