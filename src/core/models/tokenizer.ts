/**
 * Character-level tokenizer: special tokens first (padding, sequence ends, `<unk>`, the user and
 * observation markers and one marker per agent role), then newline and printable ASCII (32..126).
 * Any other character becomes `<unk>`. Special tokens are written in text exactly as their names
 * (`<solver>`) and are recognised by `encode` unless `{ special: false }` is passed.
 *
 * Not a subword (BPE) tokenizer: the lab's tiny CPU models learn characters, and a vocabulary of
 * ~110 symbols keeps the embedding and output layers small. A checkpoint stores the token list
 * (`toJSON`), and `fromJSON` refuses a list it did not write.
 *
 * Tests: test/core/models/tokenizer.test.ts.
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

export interface TokenizerJSON {
  kind: 'char';
  version: 1;
  /** Every token's text, in id order. */
  tokens: string[];
}

export interface EncodeOptions {
  /** Recognise special-token names in the text (default true). */
  special?: boolean;
}

export interface DecodeOptions {
  /** Drop special tokens instead of writing their names (default false). */
  skipSpecial?: boolean;
}

export class CharTokenizer {
  readonly tokens: readonly string[];
  readonly padId: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly unkId: number;
  private readonly ids: Map<string, number>;
  private readonly specialCount: number;

  constructor() {
    this.tokens = [...SPECIAL_TOKENS, ...CHARACTERS];
    this.ids = new Map(this.tokens.map((t, i) => [t, i]));
    this.specialCount = SPECIAL_TOKENS.length;
    this.padId = this.id('<pad>');
    this.bosId = this.id('<bos>');
    this.eosId = this.id('<eos>');
    this.unkId = this.id('<unk>');
  }

  get vocabSize(): number {
    return this.tokens.length;
  }

  /** Id of a token (special name or single character); throws on an unknown one. */
  id(token: string): number {
    const i = this.ids.get(token);
    if (i === undefined) throw new Error(`tokenizer: no token "${token}"`);
    return i;
  }

  isSpecial(id: number): boolean {
    return id >= 0 && id < this.specialCount;
  }

  /** Marker token id of a role (`<solver>`). */
  roleId(role: Role): number {
    return this.id(`<${role}>`);
  }

  encode(text: string, options: EncodeOptions = {}): number[] {
    const special = options.special ?? true;
    const out: number[] = [];
    for (let i = 0; i < text.length;) {
      if (special && text[i] === '<') {
        const name = SPECIAL_TOKENS.find((s) => text.startsWith(s, i));
        if (name) {
          out.push(this.ids.get(name)!);
          i += name.length;
          continue;
        }
      }
      const id = this.ids.get(text[i]);
      out.push(id !== undefined && id >= this.specialCount ? id : this.unkId);
      i++;
    }
    return out;
  }

  decode(ids: readonly number[], options: DecodeOptions = {}): string {
    let s = '';
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.tokens.length)
        throw new Error(`tokenizer: id ${id} is outside the vocabulary (size ${this.vocabSize})`);
      if (options.skipSpecial && id < this.specialCount) continue;
      s += this.tokens[id];
    }
    return s;
  }

  toJSON(): TokenizerJSON {
    return { kind: 'char', version: 1, tokens: [...this.tokens] };
  }

  /** Rebuilds the tokenizer from `toJSON` output; throws when the token list differs from this code's. */
  static fromJSON(json: unknown, source = 'tokenizer JSON'): CharTokenizer {
    const t = new CharTokenizer();
    const j = json as Partial<TokenizerJSON> | null;
    if (!j || typeof j !== 'object' || j.kind !== 'char' || j.version !== 1 || !Array.isArray(j.tokens)) {
      throw new Error(`${source}: not a char tokenizer (expected { kind: "char", version: 1, tokens: [...] })`);
    }
    const bad = j.tokens.findIndex((tok, i) => tok !== t.tokens[i]);
    if (j.tokens.length !== t.tokens.length || bad >= 0) {
      const at = bad >= 0 ? bad : Math.min(j.tokens.length, t.tokens.length);
      throw new Error(`${source}: token list differs from this version's at id ${at} (${JSON.stringify(j.tokens[at])} vs ${JSON.stringify(t.tokens[at])})`);
    }
    return t;
  }
}
