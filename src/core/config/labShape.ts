/**
 * The shape of a run's own lab model: `policies.model` (a size preset, models/config.ts) with
 * `policies.modelOverrides`, as the fields a lab folder is written from (models/hf/labFolder.ts
 * LabShape). Used when `policies.init` is null: the run then trains a fresh lab folder of this
 * shape (policies/registry.ts), and the up-front checks read its context (promptRoom.ts).
 * Tests: test/core/models/hf/labCache.test.ts.
 */
import { modelConfig, type ModelConfig } from '../models/config';
import type { LabShape } from '../models/hf/labFolder';
import type { RunConfig } from './runConfig';

/** Throws naming the field on a shape the model schema refuses. */
export function labShapeOf(config: RunConfig): LabShape {
  return labShapeOfModel(modelConfig(config.policies.model, { ...config.policies.modelOverrides }));
}

/** The lab-folder shape of a validated model config (a preset with its overrides). */
export function labShapeOfModel(mc: ModelConfig): LabShape {
  return {
    dModel: mc.dModel,
    nLayers: mc.nLayers,
    nHeads: mc.nHeads,
    contextLength: mc.contextLength,
    mlpRatio: mc.mlpRatio,
    tiedEmbeddings: mc.tiedEmbeddings,
    normEps: mc.normEps,
    initStd: mc.initStd,
  };
}
