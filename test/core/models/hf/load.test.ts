/**
 * loadHfModel on the fixture folders of test/fixtures/hf (made with transformers): what it reads
 * (config, stop ids, tokenizer size, chat template) equals transformers' view in expected.json;
 * an adapter folder is applied; and each kind of bad folder fails with an error naming the file,
 * the tensor or the field, with no tensor left behind (tf.memory().numTensors unchanged).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { loadHfModel } from '../../../../src/core/models/hf/load';
import { sequenceLogprobs } from '../../../../src/core/models/hf/logprobs';

const FIXTURES = resolve(__dirname, '../../../fixtures/hf');
const expectedOf = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name, 'expected.json'), 'utf8'));

/** A writable copy of a fixture folder. */
function copyOf(name: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'hf-load-')), name);
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

function editJson(path: string, edit: (j: Record<string, unknown>) => void): void {
  const j = JSON.parse(readFileSync(path, 'utf8'));
  edit(j);
  writeFileSync(path, JSON.stringify(j));
}

/** Runs `fn`, expects it to throw matching `pattern`, and checks that no tensor was left behind. */
function expectCleanFailure(fn: () => unknown, pattern: RegExp): void {
  const before = tf.memory().numTensors;
  expect(fn).toThrow(pattern);
  expect(tf.memory().numTensors).toBe(before);
}

describe('loadHfModel', () => {
  it('loads qwen3-tiny: config, stop ids, tokenizer and chat template as transformers sees them', () => {
    const e = expectedOf('qwen3-tiny');
    const m = loadHfModel(join(FIXTURES, 'qwen3-tiny'));
    try {
      expect(m.config.architecture).toBe('qwen3');
      expect(m.config.vocabSize).toBe(e.vocab_size);
      expect(m.tokenizer.vocabSize).toBe(e.tokenizer_size);
      expect(m.model.validVocab).toBe(e.tokenizer_size);
      expect([...m.generation.stopIds].sort()).toEqual([300, 302]);
      for (const t of e.tokenizer) {
        expect(m.tokenizer.encode(t.text)).toEqual(t.ids);
        expect(m.tokenizer.decode(t.ids, { skipSpecialTokens: true })).toBe(t.decoded);
      }
      for (const c of e.chat) {
        const r = m.tokenizer.applyChatTemplate(c.messages, { addGenerationPrompt: c.add_generation_prompt });
        expect(r.text).toBe(c.text);
        expect(r.ids).toEqual(c.ids);
      }
      expect(m.adapter).toBeUndefined();
    } finally {
      m.dispose();
    }
  });

  it('loads every layout (single file, sharded with an index) and frees its tensors on dispose', () => {
    const before = tf.memory().numTensors;
    for (const name of ['qwen3-tiny', 'qwen2-tiny', 'llama-tiny-sharded']) {
      const m = loadHfModel(join(FIXTURES, name));
      expect(tf.memory().numTensors).toBeGreaterThan(before);
      const seq = expectedOf(name).sequences[0];
      const lp = sequenceLogprobs(m.model, seq.ids);
      for (let i = 0; i < lp.length; i++) expect(Math.abs(lp[i] - seq.logprobs[i])).toBeLessThan(1e-4);
      m.dispose();
      expect(tf.memory().numTensors).toBe(before);
    }
  });

  it('applies a peft adapter folder', () => {
    const e = expectedOf('qwen3-tiny-lora');
    const m = loadHfModel(join(FIXTURES, e.base), { adapter: join(FIXTURES, 'qwen3-tiny-lora') });
    try {
      expect(m.adapter?.config.r).toBeGreaterThan(0);
      const seq = e.sequences[0];
      const lp = sequenceLogprobs(m.model, seq.ids);
      for (let i = 0; i < lp.length; i++) expect(Math.abs(lp[i] - seq.logprobs[i])).toBeLessThan(1e-4);
      // Not vacuous: the base alone gives other log-probs for the same ids.
      const base = expectedOf(e.base).sequences.find((s: { ids: number[] }) => JSON.stringify(s.ids) === JSON.stringify(seq.ids));
      if (base) expect(Math.max(...seq.logprobs.map((x: number, i: number) => Math.abs(x - base.logprobs[i])))).toBeGreaterThan(1e-3);
    } finally {
      m.dispose();
    }
  });
});

describe('loadHfModel refuses bad folders, naming what is wrong, with nothing half-loaded', () => {
  it('a missing folder', () => {
    expectCleanFailure(() => loadHfModel('/nonexistent/qwen'), /model folder \/nonexistent\/qwen does not exist/);
  });

  it('a folder without tokenizer.json', () => {
    const dir = copyOf('qwen3-tiny');
    rmSync(join(dir, 'tokenizer.json'));
    expectCleanFailure(() => loadHfModel(dir), /tokenizer\.json is missing/);
  });

  it('a folder without config.json', () => {
    const dir = copyOf('qwen3-tiny');
    rmSync(join(dir, 'config.json'));
    expectCleanFailure(() => loadHfModel(dir), /config\.json/);
  });

  it('a tokenizer with more tokens than the model has rows, naming both numbers', () => {
    const dir = copyOf('qwen3-tiny');
    editJson(join(dir, 'config.json'), (j) => (j.vocab_size = 300));
    expectCleanFailure(() => loadHfModel(dir), /tokenizer\.json has 303 tokens .*vocab_size is 300/);
  });

  it('a truncated safetensors file, naming it', () => {
    const dir = copyOf('qwen3-tiny');
    const file = join(dir, 'model.safetensors');
    truncateSync(file, statSync(file).size - 1000);
    expectCleanFailure(() => loadHfModel(dir), /model\.safetensors/);
  });

  it('a missing shard of a sharded checkpoint, naming it', () => {
    const dir = copyOf('llama-tiny-sharded');
    rmSync(join(dir, 'model-00003-of-00004.safetensors'));
    expectCleanFailure(() => loadHfModel(dir), /model-00003-of-00004\.safetensors/);
  });

  it('an adapter made for another base', () => {
    expectCleanFailure(() => loadHfModel(join(FIXTURES, 'qwen3-tiny'), { adapter: join(FIXTURES, 'qwen2-tiny-lora') }), /adapter|LoRA/i);
  });

  it('a missing adapter folder', () => {
    expectCleanFailure(
      () => loadHfModel(join(FIXTURES, 'qwen3-tiny'), { adapter: '/nonexistent/adapter' }),
      /adapter folder \/nonexistent\/adapter does not exist/,
    );
  });
});
