// The lab shape presets (models/config.ts) and their validation errors; a preset is what a run with
// policies.init null trains, as a lab folder of that shape (models/hf/labFolder.ts).
import { describe, expect, it } from 'vitest';
import { MODEL_PRESET_NAMES, MODEL_PRESETS, modelConfig, resolveModelConfig } from '../../../src/core/models/config';
import { parseHfConfig } from '../../../src/core/models/hf/config';
import { labHfConfigJson } from '../../../src/core/models/hf/labFolder';
import { hfParameterCount } from '../../../src/core/models/hf/memory';

describe('model config', () => {
  it('presets are valid and sized as their descriptions say (as lab folders)', () => {
    const documented = { tiny: ['~0.82M', 0.82e6], small: ['~4.8M', 4.8e6], base: ['~25M', 25e6], large: ['~85M', 85e6] } as const;
    for (const name of MODEL_PRESET_NAMES) {
      const n = hfParameterCount(parseHfConfig(labHfConfigJson(modelConfig(name)), `${name}/config.json`));
      const [text, count] = documented[name];
      expect(Math.abs(n / count - 1), name).toBeLessThan(0.02);
      expect(MODEL_PRESETS[name].description).toContain(`${text} params`);
    }
  });

  it('as lab folders: untied embedding and head, per layer 4 d^2 attention + 3 d I SwiGLU + 2 norms, a final norm', () => {
    const swiglu = { tiny: 344, small: 680, base: 1368, large: 2048 }; // 8d/3 rounded to 8: the GELU MLP's parameters
    for (const name of MODEL_PRESET_NAMES) {
      const c = modelConfig(name);
      const d = c.dModel;
      const expected = 2 * 108 * d + c.nLayers * (4 * d * d + 3 * d * swiglu[name] + 2 * d) + d;
      const hf = parseHfConfig(labHfConfigJson({ ...c }), `${name}/config.json`);
      expect(hf.intermediateSize, name).toBe(swiglu[name]);
      expect(hfParameterCount(hf), name).toBe(expected);
    }
  });

  it('rejects heads that do not divide the width, naming the field', () => {
    expect(() => modelConfig('tiny', { nHeads: 3 })).toThrow(/nHeads.*must divide dModel/);
  });

  it('rejects a fractional MLP width, bad types and unknown fields', () => {
    expect(() => modelConfig('tiny', { mlpRatio: 1.003 })).toThrow(/mlpRatio/);
    expect(() => resolveModelConfig({ ...modelConfig('tiny'), nLayers: 0 })).toThrow(/nLayers/);
    expect(() => resolveModelConfig({ ...modelConfig('tiny'), dropout: 0.1 })).toThrow(/model config/);
  });

  it('an unknown preset lists the valid names', () => {
    expect(() => modelConfig('huge')).toThrow(/tiny, small, base, large/);
  });
});
