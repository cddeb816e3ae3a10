/**
 * The layering rule of docs/ARCHITECTURE.md: src/core and src/shared never import electron, vue
 * or the DOM; src/shared never imports Node built-ins (the renderer bundles it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|vue)$/.test(name) ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
}

describe('layering', () => {
  it('src/core never imports electron, vue or DOM-only packages', () => {
    const offenders = files('src/core').flatMap((f) =>
      imports(f)
        .filter((s) => /^(electron|vue|pinia|echarts|vue-echarts)(\/|$)/.test(s))
        .map((s) => `${f}: ${s}`),
    );
    expect(offenders).toEqual([]);
    expect(files('src/core').length).toBeGreaterThan(5);
  });

  it('src/shared stays browser-safe', () => {
    const offenders = files('src/shared').flatMap((f) =>
      imports(f)
        .filter((s) => s.startsWith('node:') || /^(fs|path|child_process|electron|better-sqlite3)$/.test(s))
        .map((s) => `${f}: ${s}`),
    );
    expect(offenders).toEqual([]);
  });
});
