/**
 * Answer text handling for math grading: find the last `\boxed{...}` (or `\fbox`, or `\boxed 5`)
 * in a response, and normalise an answer string so that equal answers written differently
 * (`\dfrac{1}{2}`, `1/2`, `\frac12`; `90^\circ`; `10,\!080`; `x = 5`; `5.4 \text{ cents}` ...)
 * become the same string, or at least strings that `expr.ts` evaluates to the same value.
 *
 * The normalisation follows the spirit of Hendrycks et al.'s `strip_string` (MATH) and of
 * Qwen2.5-Math's grader, rewritten and extended; it never throws and runs in linear-ish time.
 * Not here: the comparison itself (grade.ts), expression evaluation (expr.ts).
 * Tested by test/core/eval/grade.test.ts (unit cases and the MATH500 agreement check).
 */

const BOX_COMMANDS = ['\\boxed', '\\fbox'] as const;

/** Longest answer text we normalise or compare symbolically; longer ones are compared as text. */
export const MAX_ANSWER_CHARS = 2_000;

/**
 * Content of the last `\boxed{...}` / `\fbox{...}` / `\boxed X` in `text`, brace-matched (escaped
 * `\{` `\}` do not count). The last occurrence decides: if it is unclosed or empty the result is
 * null, even when an earlier box was complete (the last answer counts, SRPO.md point 8).
 */
export function extractLastBoxed(text: string): string | null {
  let at = -1;
  let cmd = '';
  for (const c of BOX_COMMANDS) {
    let i = text.lastIndexOf(c);
    // `\boxedfoo` is another command: walk back to an occurrence not followed by a letter.
    while (i >= 0 && /[a-zA-Z]/.test(text.charAt(i + c.length))) i = text.lastIndexOf(c, i - 1);
    if (i > at) {
      at = i;
      cmd = c;
    }
  }
  if (at < 0) return null;
  let k = at + cmd.length;
  while (k < text.length && (text[k] === ' ' || text[k] === '\t')) k++;
  if (text[k] === '{') {
    const inner = matchBraces(text, k);
    if (inner === null) return null;
    const trimmed = inner.trim();
    return trimmed === '' ? null : trimmed;
  }
  if (k === at + cmd.length) return null; // `\boxedX` is not a box
  // `\boxed 5`: the answer runs to the next `$`, whitespace or end.
  const m = /^[^\s$]+/.exec(text.slice(k));
  return m ? m[0] : null;
}

/** Text strictly inside the brace group opening at `open` (which must be `{`), or null if unclosed. */
export function matchBraces(text: string, open: number): string | null {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') {
      i++; // skip the escaped character (`\{`, `\}`, `\\`)
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) return text.slice(open + 1, i);
    }
  }
  return null;
}

/** The answer part of a gold string in one of the published shapes: `#### 18`, `\boxed{..}`, plain. */
export function goldAnswerText(gold: string | number): string {
  const s = String(gold);
  const hash = s.lastIndexOf('####');
  if (hash >= 0) return s.slice(hash + 4).trim();
  if (s.includes('\\boxed') || s.includes('\\fbox')) return extractLastBoxed(s) ?? s.trim();
  return s.trim();
}

/** Units that may trail a numeric answer (MATH writes them inside or outside `\text{}`). */
const UNIT_WORDS = [
  'degrees?',
  'cents?',
  'dollars?',
  'units?',
  'square units',
  'sq units',
  'inch(es)?',
  'feet',
  'foot',
  'ft',
  'yards?',
  'miles?',
  'meters?',
  'metres?',
  'cm',
  'mm',
  'km',
  'm',
  'kg',
  'g',
  'grams?',
  'pounds?',
  'lbs?',
  'hours?',
  'minutes?',
  'seconds?',
  'days?',
  'weeks?',
  'years?',
  'mph',
  'people',
  'students?',
  'points?',
  'percent',
  'cups?',
  'ounces?',
  'oz',
  'liters?',
  'litres?',
  'ml',
  'gallons?',
  'sq',
];
const UNIT_RE = new RegExp(`^(?:${UNIT_WORDS.join('|')})(?:\\^\\{?[23]\\}?)?$`, 'i');

/**
 * Normalise a math answer for comparison. Idempotent on its own output (tested). Never throws.
 */
export function normalizeMathAnswer(input: string): string {
  let s = input.length > MAX_ANSWER_CHARS ? input.slice(0, MAX_ANSWER_CHARS) : input;
  s = s.replace(/\r?\n/g, ' ').trim();
  // Display-math wrappers and dollar signs (also `\$` currency).
  s = s.replace(/\\\$/g, '').replace(/\$/g, '');
  s = s.replace(/^\\\[|\\\]$/g, '').replace(/^\\\(|\\\)$/g, '');
  // Thin spaces and friends.
  s = s
    .replace(/(?<!\\)\\[!,;:]/g, '')
    .replace(/(?<!\\)\\ /g, ' ')
    .replace(/~/g, ' ')
    .replace(/\\quad|\\qquad/g, ' ');
  s = s.replace(/\\(?:displaystyle|textstyle|scriptstyle)(?![a-zA-Z])/g, '');
  s = s.replace(/\\[dt]frac(?![a-zA-Z])/g, '\\frac');
  s = s.replace(/\\(?:left|right)\./g, '');
  s = s.replace(/\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])\s*/g, '');
  // Degrees and percent.
  s = s
    .replace(/\^\s*\{\s*\\circ\s*\}/g, '')
    .replace(/\^\s*\\circ/g, '')
    .replace(/°/g, '');
  s = s.replace(/\\%/g, '').replace(/%/g, '');
  // Trailing units: `5.4 \text{ cents}`, `864 \mbox{ inches}^2`, `\frac{270}7\text{ degrees}`.
  s = stripTrailingUnits(s);
  // Unwrap remaining text commands: `\text{Evelyn}` -> `Evelyn`, `\text{(C)}` -> `(C)`.
  for (let guard = 0; guard < 20; guard++) {
    const next = s.replace(/\\(?:text|textbf|textit|mbox|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}/g, '$1');
    if (next === s) break;
    s = next;
  }
  s = s.trim();
  // A leading `x =` / `x \in` (one variable) when nothing else is an equation.
  s = s.replace(/^[a-zA-Z]\s*(?:=|\\in(?![a-zA-Z]))\s*(?=[^=]*$)/, '');
  // Sentence-final period.
  s = s.replace(/\.\s*$/, '');
  // `\frac 59`, `\frac12`, `\frac{270}7`, `\frac9{19}`, `\sqrt2`: give every argument braces.
  s = s.replace(/\\(frac|sqrt)\s+/g, '\\$1');
  s = fixFracs(s);
  s = s.replace(/\\sqrt(?![a-zA-Z[{])\s*([0-9a-zA-Z])/g, '\\sqrt{$1}');
  // Protect a command that is followed by a letter (`\cot x`) before dropping spaces.
  s = s.replace(/(\\[a-zA-Z]+)\s+(?=[a-zA-Z])/g, '$1\u0000');
  // eslint-disable-next-line no-control-regex -- NUL is the placeholder set just above; it cannot occur in an answer.
  s = s.replace(/\s+/g, '').replace(/\u0000/g, ' ');
  // Subscript braces on a single token: `4210_{5}` -> `4210_5`.
  s = s.replace(/_\{([0-9a-zA-Z])\}/g, '_$1');
  // Leading-dot decimals and trailing `.0`.
  s = s.replace(/(^|[^0-9])\.(\d)/g, '$10.$2');
  s = s.replace(/(\d)\.0+(?![0-9])/g, '$1');
  // Thousands separators: only when the whole number is written that way.
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '');
  // A plain `a/b` becomes `\frac{a}{b}`.
  const slash = /^(-?)(\d+)\/(\d+)$/.exec(s);
  if (slash) s = `${slash[1]}\\frac{${slash[2]}}{${slash[3]}}`;
  // Mixed numbers `1\frac{4}{5}` -> `1+\frac{4}{5}` (whole answer only, MATH's convention).
  const mixed = /^(\d+)(\\frac\{\d+\}\{\d+\})$/.exec(s);
  if (mixed) s = `${mixed[1]}+${mixed[2]}`;
  // Multiple choice: `(C)` -> `C`.
  const choice = /^\(([A-Ea-e])\)$/.exec(s);
  if (choice) s = choice[1].toUpperCase();
  return s;
}

function stripTrailingUnits(s: string): string {
  for (let guard = 0; guard < 4; guard++) {
    const m = /^(.*?[0-9}a-zA-Z)\]])\s*\\(?:text|mbox|mathrm)\s*\{\s*([^{}]*?)\s*\}\s*(\^\s*\{?\s*[23]\s*\}?)?\s*$/.exec(s);
    if (m && m[1].trim() !== '' && UNIT_RE.test(m[2].trim())) {
      s = m[1].trim();
      continue;
    }
    const plain = /^(.*?[0-9}])\s*([a-zA-Z][a-zA-Z ]*?)\s*(\^\s*\{?\s*[23]\s*\}?)?\s*$/.exec(s);
    if (plain && plain[2].length > 1 && UNIT_RE.test(plain[2].trim())) {
      s = plain[1].trim();
      continue;
    }
    break;
  }
  return s;
}

/** `\frac ab` / `\frac{a}b` / `\frac a{b}` -> `\frac{a}{b}` (single-character bare arguments). */
function fixFracs(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const at = s.indexOf('\\frac', i);
    if (at < 0 || /[a-zA-Z]/.test(s.charAt(at + 5))) {
      if (at < 0) {
        out += s.slice(i);
        break;
      }
      out += s.slice(i, at + 5);
      i = at + 5;
      continue;
    }
    out += s.slice(i, at) + '\\frac';
    let k = at + 5;
    for (let arg = 0; arg < 2 && k < s.length; arg++) {
      if (s[k] === '{') {
        const inner = matchBraces(s, k);
        if (inner === null) break;
        out += `{${inner}}`;
        k += inner.length + 2;
      } else if (s[k] === '\\') {
        const m = /^\\[a-zA-Z]+/.exec(s.slice(k));
        if (!m) break;
        out += `{${m[0]}}`;
        k += m[0].length;
      } else {
        out += `{${s[k]}}`;
        k += 1;
      }
    }
    i = k;
  }
  return out;
}
