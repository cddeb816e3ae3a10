/**
 * The most bytes each small file of a model folder may hold, checked (with the file being a
 * regular file: ../util/regularFile.ts) before it is read. Each limit is far above what real
 * models ship, so only a broken or hostile folder meets one: a config.json linked to /dev/zero,
 * a tokenizer.json of gigabytes. Weights (.safetensors) have no size limit, only the regular-file
 * check and their header's own checks (safetensorsHeader.ts).
 *
 * docs/GUARANTEES.md states these sizes; change both together. Tests:
 * test/core/models/hf/fileChecks.test.ts.
 */

const MIB = 1024 * 1024;

export const MODEL_FILE_LIMITS = {
  // Qwen3-0.6B's is 726 bytes, Llama 3.2's 877; the lab's under 1 kB.
  'config.json': 1 * MIB,
  // ~200 bytes in every published folder.
  'generation_config.json': 1 * MIB,
  // peft writes ~1 kB.
  'adapter_config.json': 1 * MIB,
  // Qwen3's is 9.7 kB, Llama 3's ~50 kB (256 reserved tokens listed); folders listing thousands of added tokens reach ~1 MB.
  'tokenizer_config.json': 4 * MIB,
  // Qwen3's template is ~4 kB; the longest published ones (tool-calling) ~20 kB.
  'chat_template.jinja': 1 * MIB,
  'chat_template.json': 1 * MIB,
  // Qwen3's is 11 MB, Llama 3's 9 MB; 256k-token vocabularies ~35 MB. The lab's char tokenizer: a few kB.
  'tokenizer.json': 64 * MIB,
  // The index of a 400B-parameter checkpoint is ~100s of kB (one line per tensor).
  'model.safetensors.index.json': 16 * MIB,
} as const satisfies Record<string, number>;

export type ModelFileName = keyof typeof MODEL_FILE_LIMITS;
