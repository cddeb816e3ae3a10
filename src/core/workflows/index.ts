/**
 * Workflows: the registry (registry.ts), the Episode interface the rollout orchestrator drives
 * (types.ts), output parsers, prompts, reference drivers and warm-start demonstrations.
 */
export { WORKFLOWS, WORKFLOW_NAMES, getWorkflow, type WorkflowName } from './registry';
export type * from './types';
export { EVENT_KINDS, POLICY_ROLES } from './types';
export * from './parsers';
export { INSTRUCTION_NAMES, INSTRUCTIONS, assemblePrompt, type InstructionName, type ContextEntry } from './prompts';
export { cardinalitySchema, type Cardinality } from './config';
export { mathConfigSchema, resolveMathConfig, scoreMath, type MathConfig } from './math';
export { searchConfigSchema, resolveSearchConfig, type SearchConfig } from './search';
export { singleConfigSchema, resolveSingleConfig, type SingleConfig } from './single';
export { runEpisode, runLockstep, type BatchPolicy, type MemberPolicy } from './drive';
export { GOLD_OUTPUTS, goldPolicy } from './gold';
export { warmStartDemos, demosToJsonl, writeDemosJsonl, type DemoOptions, type DemoRow } from './demos';
