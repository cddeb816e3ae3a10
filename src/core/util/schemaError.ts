/**
 * Turns a zod error into one readable message naming, for each problem, the field path, the
 * value that was given and what is allowed: `objective config: field "clipLow" = 1.5: Too big:
 * expected number to be <1`. Shared by every schema boundary of the core.
 */
import type { z } from 'zod';

export function formatSchemaError(what: string, error: z.ZodError, input: unknown): string {
  const lines = error.issues.map((issue) => {
    const path = issue.path.map(String).join('.') || '(root)';
    if (issue.code === 'unrecognized_keys') {
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${[...issue.path.map(String), k].join('.')}"`).join(', ')}`;
    }
    const value = valueAt(input, issue.path);
    const shown = value === undefined ? 'missing' : JSON.stringify(value);
    return `field "${path}" = ${shown}: ${issue.message}`;
  });
  return `${what}: ${lines.join('; ')}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let cur: unknown = input;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
