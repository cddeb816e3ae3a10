/**
 * The layering rule of docs/ARCHITECTURE.md, enforced by ESLint (`npm run lint`, eslint.config.mjs
 * `layering`): src/core never imports electron, vue, the UI packages or the layers above it;
 * src/shared is browser-safe and imports nothing outside itself; the renderer never imports
 * Node modules, src/core or the other Node layers.
 * This test checks that the lint config still applies those rules to the real folders, that they
 * fire on forbidden imports and stay quiet on allowed ones, and that the tree passes them (so
 * `npm test` alone still catches a layering break). Not the rest of the lint: `npm run lint`.
 */
import { ESLint, type Linter } from 'eslint';
import pluginVue from 'eslint-plugin-vue';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs config without type declarations.
import { layering as layeringUntyped } from '../eslint.config.mjs';

const layering = layeringUntyped as Record<'src/core' | 'src/shared' | 'src/renderer', Linter.RuleEntry>;

/** An ESLint with only the layering rules (no type information: fast, and lintText needs no project). */
function layeringOnly(): ESLint {
  return new ESLint({
    overrideConfigFile: true,
    overrideConfig: [
      { linterOptions: { reportUnusedDisableDirectives: 'off' } },
      ...(pluginVue.configs['flat/base'] as Linter.Config[]),
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } },
      { files: ['**/*.vue'], languageOptions: { parserOptions: { parser: tseslint.parser } } },
      { files: ['src/core/**/*.ts'], rules: { 'no-restricted-imports': layering['src/core'] } },
      { files: ['src/shared/**/*.ts'], rules: { 'no-restricted-imports': layering['src/shared'] } },
      { files: ['src/renderer/**/*.{ts,vue}'], rules: { 'no-restricted-imports': layering['src/renderer'] } },
    ],
  });
}

/** Rule ids reported for one import line placed in a file at `filePath`. */
async function reported(filePath: string, specifier: string): Promise<string[]> {
  const code = `import x from '${specifier}';\nconsole.log(x);\n`;
  const text = filePath.endsWith('.vue') ? `<script setup lang="ts">\n${code}</script>\n` : code;
  const [result] = await layeringOnly().lintText(text, { filePath });
  return result.messages.map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

describe('layering', () => {
  it('eslint.config.mjs applies the layering rules to src/core, src/shared and src/renderer', async () => {
    const eslint = new ESLint();
    const cases: [string, keyof typeof layering][] = [
      ['src/core/store/db.ts', 'src/core'],
      ['src/shared/api.ts', 'src/shared'],
      ['src/renderer/src/main.ts', 'src/renderer'],
      ['src/renderer/src/App.vue', 'src/renderer'],
    ];
    for (const [file, layer] of cases) {
      const config = (await eslint.calculateConfigForFile(file)) as Linter.Config;
      expect(config.rules?.['no-restricted-imports'], file).toEqual([2, (layering[layer] as unknown[])[1]]);
    }
  });

  it.each([
    ['src/core/x.ts', 'electron'],
    ['src/core/x.ts', 'vue'],
    ['src/core/x.ts', 'echarts/core'],
    ['src/core/host/x.ts', '../../renderer/src/api/client'],
    ['src/core/host/x.ts', '../../main/index'],
    ['src/shared/x.ts', 'node:fs'],
    ['src/shared/x.ts', 'path'],
    ['src/shared/x.ts', 'better-sqlite3'],
    ['src/shared/x.ts', '../core/srpo/scales'],
    ['src/renderer/src/views/x.ts', '../../../core/store/db'],
    ['src/renderer/src/views/x.ts', 'node:path'],
    ['src/renderer/src/views/x.ts', 'electron'],
    ['src/renderer/src/views/X.vue', '../../../core/store/db'],
    ['src/renderer/src/views/X.vue', 'node:fs'],
  ])('%s may not import %s', async (file, specifier) => {
    expect(await reported(file, specifier)).toEqual(['no-restricted-imports']);
  });

  it.each([
    ['src/core/x.ts', 'node:fs'],
    ['src/core/x.ts', 'better-sqlite3'],
    ['src/core/host/x.ts', '../../shared/api'],
    ['src/shared/x.ts', './api'],
    ['src/renderer/src/views/x.ts', '../../../shared/api'],
    ['src/renderer/src/views/x.ts', 'echarts/core'],
    ['src/renderer/src/views/x.ts', 'vue'],
    ['src/renderer/src/views/X.vue', '../../../shared/api'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await reported(file, specifier)).toEqual([]);
  });

  it('the tree passes the layering rules', async () => {
    const results = await layeringOnly().lintFiles(['src/core', 'src/shared', 'src/renderer']);
    // The files' own eslint-disable comments name rules this ESLint does not load: not ours to judge.
    const offenders = results.flatMap((r) =>
      r.messages.filter((m) => m.fatal || m.ruleId === 'no-restricted-imports').map((m) => `${r.filePath}:${m.line}: ${m.message}`),
    );
    expect(offenders).toEqual([]);
    expect(results.length).toBeGreaterThan(50);
  });
});
