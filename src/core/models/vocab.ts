/**
 * The lab's character vocabulary and the agent roles: special tokens first (padding, sequence
 * ends, `<unk>`, the user and observation markers and one marker per agent role), then newline
 * and printable ASCII (32..126). The lab's own model folders (hf/labFolder.ts) write it as their
 * tokenizer.json, with these ids; runs recorded before issue 29 (the removed character tokenizer)
 * used the same ids, so their traces decode with it (host/tokenText.ts).
 *
 * Tests: test/core/models/hf/labFolder.test.ts.
 */

/** The agent roles the workflows use; each has a marker token `<role>`. */
export const ROLES = ['router', 'solver', 'verifier', 'aggregator', 'searcher', 'answerer'] as const;
export type Role = (typeof ROLES)[number];

/** Special tokens, in id order. `<pad>` is id 0. */
export const SPECIAL_TOKENS = ['<pad>', '<bos>', '<eos>', '<unk>', '<user>', '<obs>', ...ROLES.map((r) => `<${r}>` as const)] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/** Newline, then printable ASCII 32..126: the ordinary characters, in id order after the specials. */
export const CHARACTERS: readonly string[] = ['\n', ...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))];

/** Vocabulary size of the standard tokenizer (12 specials + 96 characters = 108). */
export const CHAR_VOCAB_SIZE = SPECIAL_TOKENS.length + CHARACTERS.length;
