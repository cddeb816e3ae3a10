/**
 * The synthetic corpus vocabulary of bench/corpus.bench.ts and test/core/data/corpusTopK.test.ts:
 * word i (0: the most frequent under the Zipf-like draws both make) spells i + 1 in base 20 with
 * syllables, so every word is distinct, pronounceable and stemmed by porter like an English word.
 */
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'zen', 'tor', 'vel', 'qui', 'dar', 'sol', 'bri', 'nox', 'pel', 'mar', 'tis', 'gor', 'fen', 'ul', 'ash', 'rin'];

/** The first `size` words of the vocabulary, most frequent first. */
export function syllableVocabulary(size: number): string[] {
  return Array.from({ length: size }, (_, i) => {
    let s = '';
    for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) s += SYLLABLES[n % SYLLABLES.length];
    return s;
  });
}
