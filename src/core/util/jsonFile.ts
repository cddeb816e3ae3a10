/**
 * Reads a JSON file, naming it in both errors: `FILE: cannot read (...)` and `FILE: not JSON (...)`.
 * Used by the model folders' readers (the lab's checkpoints, Hugging Face config and generation
 * config, peft adapter configs). Tested through them: test/core/models/checkpoint.test.ts,
 * test/core/models/hf/config.test.ts.
 */
import * as fs from 'node:fs';

export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`${file}: cannot read (${(err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
}
