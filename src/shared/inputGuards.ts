/**
 * Guards for input that becomes objects, applied where it arrives (web server bodies, Electron
 * IPC, `--set`, config merges), before any parser, validator or merge walks it recursively:
 *
 * - Keys that reach the prototype chain (`__proto__`, `constructor`, `prototype`) are refused:
 *   `setPath(o, '__proto__.x', 1)` or a merge of `{ "__proto__": ... }` would otherwise write to
 *   `Object.prototype` or swap an object's prototype.
 * - Nesting deeper than a limit is refused: structured clone (the worker's postMessage, Electron
 *   IPC) and recursive validators overflow the stack at a few thousand levels. No lab input needs
 *   more than ~8 levels (body.config.workflow.options.solvers.mode).
 *
 * Every walk here is iterative (an explicit stack), so the guards themselves cannot overflow.
 * Pure and browser-safe (no Node imports). Tests: test/server/limits.test.ts, test/cli/protoKeys.test.ts.
 */

/** Keys that reach the prototype chain when assigned with `o[key] = ...`. */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** Deepest nesting of objects/arrays accepted in an API input (the lab's own inputs need < 10). */
export const MAX_INPUT_DEPTH = 64;

export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.includes(key);
}

/** The message of a refused key: names the key, where it was, and why. */
export function forbiddenKeyMessage(key: string, where: string): string {
  return `${where}: the key "${key}" is not allowed (${FORBIDDEN_KEYS.join(', ')} are refused as keys: they would reach the prototype chain)`;
}

/**
 * The dotted path of the first forbidden own key in `value` (at any depth), or null. Walks at
 * most `maxDepth` levels (deeper input is refused by `valueDepthExceeds` first).
 */
export function findForbiddenKey(value: unknown, maxDepth = MAX_INPUT_DEPTH): { key: string; path: string } | null {
  const stack: { v: unknown; path: string; depth: number }[] = [{ v: value, path: '', depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (!v || typeof v !== 'object' || depth > maxDepth) continue;
    const array = Array.isArray(v);
    for (const k of Object.keys(v)) {
      const p = array ? `${path}[${k}]` : path ? `${path}.${k}` : k;
      if (!array && isForbiddenKey(k)) return { key: k, path: p };
      stack.push({ v: (v as Record<string, unknown>)[k], path: p, depth: depth + 1 });
    }
  }
  return null;
}

/** Throws (naming the key and its path) if `value` holds a forbidden key anywhere. */
export function assertNoForbiddenKeys(value: unknown, where: string): void {
  const hit = findForbiddenKey(value);
  if (hit) throw new Error(forbiddenKeyMessage(hit.key, hit.path === hit.key ? where : `${where} at "${hit.path}"`));
}

/** Whether a parsed value nests objects/arrays deeper than `maxDepth` (iterative; stops early). */
export function valueDepthExceeds(value: unknown, maxDepth = MAX_INPUT_DEPTH): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Object.values(v)) if (child && typeof child === 'object') stack.push({ v: child, depth: depth + 1 });
  }
  return false;
}

/**
 * The deepest nesting of `{`/`[` in JSON text, skipping string contents (escapes included),
 * without parsing: a linear scan with a counter, so a 4,000-level body is measured in
 * microseconds and never recursed into. Stops counting past `stopAt`. Malformed JSON is left to
 * JSON.parse (this only measures).
 */
export function jsonTextDepth(text: string, stopAt = Infinity): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > deepest) deepest = depth;
      if (deepest > stopAt) return deepest;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return deepest;
}
