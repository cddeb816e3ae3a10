/**
 * How a run's token ids read as text in the trace viewer: a run of the lab's own model
 * (`policies.init` null, and every run recorded before the one model family) through the
 * character table its folders' tokenizer.json holds (models/vocab.ts), any other run through its
 * model folder's tokenizer (each id decoded on
 * its own, so a byte-level piece of a multi-byte character shows as U+FFFD; special tokens as
 * written, e.g. `<|im_end|>`). Tokenizers are cached per folder; a folder that is gone or
 * unreadable falls back to `<id>` pieces rather than failing the read.
 *
 * Not here: tokenizing for training (src/core/policies). Tested by test/core/host/tokenText.test.ts.
 */
import * as path from 'node:path';
import { isHfModelFolder, labRoot } from '../config';
import { HfTokenizer } from '../models/hf/tokenizer';
import { CHARACTERS, SPECIAL_TOKENS } from '../models/vocab';

const CHAR_TEXT: readonly string[] = [...SPECIAL_TOKENS, ...CHARACTERS];

/** id -> text piece. */
export type TokenText = (id: number) => string;

const labText: TokenText = (id) => CHAR_TEXT[id] ?? `<${id}>`;
const unknownText: TokenText = (id) => `<${id}>`;

/** Decoders by resolved model folder; null when the folder's tokenizer cannot be read. */
const hfCache = new Map<string, TokenText | null>();

function hfText(dir: string): TokenText | null {
  if (!hfCache.has(dir)) {
    let text: TokenText | null = null;
    try {
      const tok = HfTokenizer.fromFolder(dir);
      text = (id) => (Number.isInteger(id) && id >= 0 && id < tok.vocabSize ? tok.decode([id]) : `<${id}>`);
    } catch {
      text = null;
    }
    hfCache.set(dir, text);
  }
  return hfCache.get(dir)!;
}

/** The decoder of a run's tokens from its stored config (`policies.init` relative to the lab's root, as the engine reads it). */
export function tokenTextFor(config: unknown): TokenText {
  const init = (config as { policies?: { init?: unknown } } | null)?.policies?.init;
  if (typeof init !== 'string' || init === '') return labText;
  const dir = path.resolve(labRoot(), init);
  if (!isHfModelFolder(dir)) return labText;
  return hfText(dir) ?? unknownText;
}
