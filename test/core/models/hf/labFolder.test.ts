/**
 * The lab's character models as Hugging Face folders (src/core/models/hf/labFolder.ts): the
 * tokenizer.json read by @huggingface/tokenizers gives the character vocabulary's ids
 * (models/vocab.ts; `referenceIds` below, a slow obvious encoder) on every prompt and completion
 * the built-in tasks produce (demonstration episodes of each task's workflow, every
 * role, later turns included), the chat template renders exactly the lab's prompt layout (`<bos>`,
 * role marker, text) through policies/hf.ts `hfPromptIds`, a written folder loads as the twin shape
 * and a supervised pass lowers its loss, leaving no tensors behind; and passing the role leaves another model's template
 * (the Qwen3 fixture) rendering the same ids.
 */
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Bm25Retriever, getTaskGenerator, TASK_NAMES } from '../../../../src/core/data';
import { labHfConfigJson, labTokens, LAB_CHAT_TEMPLATE, twinIntermediateSize, writeLabFolder } from '../../../../src/core/models/hf/labFolder';
import { loadHfModel, type LoadedHfModel } from '../../../../src/core/models/hf/load';
import { fitHfPairs } from '../../../../src/core/models/hf/supervised';
import { HfTokenizer } from '../../../../src/core/models/hf/tokenizer';
import { CHAR_VOCAB_SIZE, CHARACTERS, ROLES, SPECIAL_TOKENS } from '../../../../src/core/models/vocab';
import { hfPromptIds } from '../../../../src/core/policies/hf';
import { labFolderPromptIds } from '../../../../src/core/train/warmstart';
import { warmStartDemos, type DemoRow } from '../../../../src/core/workflows/demos';
import { CHAT_SYSTEM_PROMPTS } from '../../../../src/core/workflows/chatPrompts';
import type { InstructionName } from '../../../../src/core/workflows/prompts';

const [BOS, EOS, UNK] = [1, 2, 3];

/**
 * The character vocabulary's ids of `text`, one character at a time: a special token's name is
 * that token (unless `special` is false), newline and printable ASCII are their own ids, any
 * other code point is `<unk>`.
 */
function referenceIds(text: string, special = true): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length;) {
    const name = special ? SPECIAL_TOKENS.find((t) => text.startsWith(t, i)) : undefined;
    if (name) {
      out.push(SPECIAL_TOKENS.indexOf(name));
      i += name.length;
      continue;
    }
    const ch = String.fromCodePoint(text.codePointAt(i)!);
    const k = CHARACTERS.indexOf(ch);
    out.push(k >= 0 ? SPECIAL_TOKENS.length + k : UNK);
    i += ch.length;
  }
  return out;
}

const SHAPE = { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 512, normEps: 1e-5, initStd: 0.02 };

/** Demonstration rows of every built-in task, run through the workflow its domain takes. */
function builtInDemos(): { task: string; rows: DemoRow[] }[] {
  return TASK_NAMES.map((task) => {
    const generator = getTaskGenerator(task);
    const corpus = generator.corpus?.();
    const rows = warmStartDemos({
      generator,
      workflow: generator.domain === 'math' ? 'math' : 'search',
      episodes: 12,
      seed: 3,
      tools: corpus ? { search: Bm25Retriever.open(corpus) } : undefined,
    });
    return { task, rows };
  });
}

describe('lab folders: the character vocabulary as tokenizer.json', () => {
  let dir: string;
  let loaded: LoadedHfModel;
  let hf: HfTokenizer;
  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'srpo-labfolder-')), 'model');
    writeLabFolder(dir, SHAPE, { seed: 5 });
    loaded = loadHfModel(dir, { trainable: true });
    hf = loaded.tokenizer;
  });
  afterAll(() => loaded?.dispose());

  it('has the character vocabulary with its ids, specials special', () => {
    expect(hf.vocabSize).toBe(CHAR_VOCAB_SIZE);
    expect(labTokens()).toEqual([...SPECIAL_TOKENS, ...CHARACTERS]);
    labTokens().forEach((token, id) => expect(hf.tokenToId(token)).toBe(id));
    expect([...hf.specialIds].sort((a, b) => a - b)).toEqual(SPECIAL_TOKENS.map((_, i) => i));
    // Special names in text are the special tokens, and decode back.
    const text = '<bos><solver>12+3=<eos>';
    const ids = [BOS, 7, 13 + 17, 13 + 18, 13 + 11, 13 + 19, 13 + 29, EOS]; // '1' is 49: id 12 + 1 + 49 - 32
    expect(referenceIds(text)).toEqual(ids);
    expect(hf.encode(text, { addSpecialTokens: true })).toEqual(ids);
    expect(hf.decode(ids)).toBe(text);
    expect(hf.decode(ids, { skipSpecialTokens: true })).toBe('12+3=');
  });

  it('gives the reference ids on every prompt and completion of every built-in task', () => {
    let checked = 0;
    for (const { task, rows } of builtInDemos()) {
      expect({ task, rows: rows.length > 0 }).toEqual({ task, rows: true });
      for (const d of rows) {
        const want = referenceIds(d.prompt, false);
        const got = hf.encode(d.prompt, { addSpecialTokens: true });
        if (got.length !== want.length || got.some((id, i) => id !== want[i]))
          expect({ task, prompt: d.prompt, ids: got }).toEqual({ task, prompt: d.prompt, ids: want });
        expect(hf.encode(d.completion, { addSpecialTokens: true })).toEqual(referenceIds(d.completion));
        expect(hf.decode(got)).toBe(d.prompt);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('characters outside the vocabulary are <unk>, one per code point', () => {
    expect(hf.encode('a\tb\u00e9', { addSpecialTokens: true })).toEqual([78, UNK, 79, UNK]);
    expect(hf.encode('x\u{1F600}', { addSpecialTokens: true })).toEqual([101, UNK]); // one <unk> for two UTF-16 units
  });

  it("the chat template renders the lab's prompt layout: <bos>, role marker, text (the system turn left out)", () => {
    const instructions = Object.keys(CHAT_SYSTEM_PROMPTS) as InstructionName[];
    const prompt = 'Question: 3+4*2\nSolve it.';
    for (const role of ROLES) {
      const want = [BOS, SPECIAL_TOKENS.indexOf(`<${role}>`), ...referenceIds(prompt, false)];
      for (const instruction of instructions) expect(hfPromptIds(hf, instruction, prompt, undefined, role)).toEqual(want);
      expect(labFolderPromptIds(hf, role, prompt)).toEqual(want);
    }
    // Without the role (transformers' apply_chat_template): <bos> and the text.
    expect(hfPromptIds(hf, 'solver', prompt)).toEqual([BOS, ...referenceIds(prompt, false)]);
    expect(readFileSync(join(dir, 'chat_template.jinja'), 'utf8').trim()).toBe(LAB_CHAT_TEMPLATE);
  });

  it('config.json is the Llama-style twin (full KV heads, SwiGLU of the GELU MLP width) and loads', () => {
    const c = loaded.config;
    expect(c).toMatchObject({
      architecture: 'llama',
      vocabSize: 108,
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 2,
      headDim: 8,
      maxPositions: 1024,
    });
    expect(c.tieWordEmbeddings).toBe(false);
    expect(loaded.generation.stopIds).toEqual([EOS]);
    // 3 d I within 2% of the GELU MLP's 8 d^2 (the lab's quick shape, d64).
    const d = 64;
    expect(Math.abs(3 * d * twinIntermediateSize(d) - 8 * d * d) / (8 * d * d)).toBeLessThan(0.02);
    expect(() => labHfConfigJson({ ...SHAPE, nHeads: 3 })).toThrow(/even whole head width/);
  });

  it('the same seed writes the same folder; a supervised pass lowers the loss and leaves no tensors behind', () => {
    const again = join(mkdtempSync(join(tmpdir(), 'srpo-labfolder-')), 'model');
    writeLabFolder(again, SHAPE, { seed: 5 });
    expect(readFileSync(join(again, 'model.safetensors'))).toEqual(readFileSync(join(dir, 'model.safetensors')));
    const rows = builtInDemos()
      .find((t) => t.task === 'arith-chain')!
      .rows.slice(0, 24);
    const pairs = rows.map((d) => ({
      prompt: labFolderPromptIds(hf, d.role, d.prompt),
      completion: [...hf.encode(d.completion, { addSpecialTokens: false }), EOS],
    }));
    const before = tf.memory().numTensors;
    const epochs = fitHfPairs(loaded.model, pairs, { epochs: 3, batchSize: 8, learningRate: 3e-3, seed: 1 });
    expect(epochs[2].loss).toBeLessThan(epochs[0].loss);
    expect(tf.memory().numTensors).toBe(before); // the optimizer's slots and every step's tensors are freed
  });
});

describe("the role variable leaves other models' templates alone", () => {
  it('Qwen3 fixture: the same ids with and without the role', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'srpo-labfolder-q-')), 'qwen3-tiny');
    cpSync(resolve(__dirname, '../../../fixtures/hf/qwen3-tiny'), dir, { recursive: true });
    const tok = HfTokenizer.fromFolder(dir);
    const a = hfPromptIds(tok, 'solver', 'Question: 1+1', false);
    expect(hfPromptIds(tok, 'solver', 'Question: 1+1', false, 'solver')).toEqual(a);
    expect(a.length).toBeGreaterThan(20); // the system message is there
  });
});
