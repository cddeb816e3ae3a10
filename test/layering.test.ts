/**
 * The layering rule of docs/ARCHITECTURE.md, enforced by ESLint (`npm run lint`, eslint.config.mjs
 * `layering`): src/core never imports electron, vue, the UI packages or the layers above it;
 * src/shared is browser-safe and imports nothing outside itself; the renderer never imports
 * Node modules, src/core or the other Node layers. And the packages (eslint.config.mjs
 * `corePackages`, `sharedPackages`, rule eslint-rules/packageLayers.mjs): src/core's folders
 * import each other only down the order util < eval / store < srpo / models / data < workflows /
 * policies / external / config < rollout < train / suites < host, and neither they nor src/shared's
 * modules form a cycle.
 * This test checks that the lint config still applies those rules to the real folders, that they
 * fire on forbidden imports (a planted cycle in a scratch folder included) and stay quiet on
 * allowed ones, and that the tree passes them (so `npm test` alone still catches a layering
 * break). Not the rest of the lint: `npm run lint`.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import pluginVue from 'eslint-plugin-vue';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs config without type declarations.
import { layering as layeringUntyped, corePackages as corePackagesUntyped, sharedPackages as sharedPackagesUntyped } from '../eslint.config.mjs';
// @ts-expect-error -- a plain .mjs rule without type declarations.
import packageLayersRule from '../eslint-rules/packageLayers.mjs';

const layering = layeringUntyped as Record<'src/core' | 'src/shared' | 'src/renderer', Linter.RuleEntry>;
interface PackageOptions {
  root: string;
  granularity?: 'folder' | 'file';
  layers?: string[][];
  exceptions?: { from: string; to: string; why: string }[];
}
const corePackages = corePackagesUntyped as PackageOptions;
const sharedPackages = sharedPackagesUntyped as PackageOptions;
const local = { rules: { 'package-layers': packageLayersRule as NonNullable<ESLint.Plugin['rules']>[string] } };
const PACKAGE_RULE = 'local/package-layers';

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
      { files: ['src/core/**/*.ts'], plugins: { local }, rules: { [PACKAGE_RULE]: ['error', corePackages] } },
      { files: ['src/shared/**/*.ts'], plugins: { local }, rules: { [PACKAGE_RULE]: ['error', sharedPackages] } },
    ],
  });
}

/** Messages of the package rule alone, with `options`, on `code` placed at `filePath`. */
async function packageMessages(options: PackageOptions, filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    overrideConfigFile: true,
    cwd: options.root.startsWith('/') ? dirname(options.root) : process.cwd(),
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins: { local }, rules: { [PACKAGE_RULE]: ['error', options] } },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.map((m) => (m.ruleId === PACKAGE_RULE ? m.message : `${m.ruleId ?? 'fatal'}: ${m.message}`));
}

/** A scratch source folder: `files` (path -> text) written under a fresh temporary root. */
function scratchRoot(files: Record<string, string>): string {
  const root = join(mkdtempSync(join(tmpdir(), 'srpo-layers-')), 'src');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
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
      r.messages
        .filter((m) => m.fatal || m.ruleId === 'no-restricted-imports' || m.ruleId === PACKAGE_RULE)
        .map((m) => `${r.filePath}:${m.line}: ${m.message}`),
    );
    expect(offenders).toEqual([]);
    expect(results.length).toBeGreaterThan(50);
  });
});

describe('package order and cycles', () => {
  it('eslint.config.mjs applies the package rule to src/core (with its order) and src/shared (cycles only)', async () => {
    const eslint = new ESLint();
    const core = (await eslint.calculateConfigForFile('src/core/train/trainer.ts')) as Linter.Config;
    const shared = (await eslint.calculateConfigForFile('src/shared/api.ts')) as Linter.Config;
    expect(core.rules?.[PACKAGE_RULE]).toEqual([2, corePackages]);
    expect(shared.rules?.[PACKAGE_RULE]).toEqual([2, sharedPackages]);
    expect(corePackages.layers).toEqual([
      ['util'],
      ['eval', 'store'],
      ['srpo', 'models', 'data'],
      ['workflows', 'policies', 'external', 'config'],
      ['rollout'],
      ['train', 'suites'],
      ['host'],
    ]);
    expect(sharedPackages).toMatchObject({ root: 'src/shared', granularity: 'file' });
    expect(sharedPackages.layers).toBeUndefined();
  });

  it.each([
    ['src/core/models/x.ts', '../train/trainer', 'models (layer 2) may not import train (layer 5)'],
    ['src/core/util/x.ts', '../srpo/advantages', 'util (layer 0) may not import srpo (layer 2)'],
    ['src/core/suites/x.ts', '../host/runs', 'suites (layer 5) may not import host (layer 6)'],
    ['src/core/policies/x.ts', '../train/checkpoints', 'policies (layer 3) may not import train (layer 5)'],
    ['src/core/workflows/x.ts', '../rollout/orchestrator', 'workflows (layer 3) may not import rollout (layer 4)'],
    ['src/core/external/x.ts', '../rollout/drivers', 'external (layer 3) may not import rollout (layer 4)'],
    ['src/core/rollout/x.ts', '../train/trainer', 'rollout (layer 4) may not import train (layer 5)'],
  ])('in src/core, %s may not import %s (against the order)', async (file, specifier, says) => {
    const messages = await packageMessages(corePackages, file, `import type { X } from '${specifier}';\nexport type Y = X;\n`);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(says);
  });

  it.each([
    ['src/core/host/x.ts', '../suites/spec'],
    ['src/core/train/x.ts', '../policies/registry'],
    ['src/core/policies/x.ts', '../models/hf/model'],
    ['src/core/rollout/x.ts', '../external/server'],
    ['src/core/models/x.ts', './hf/model'],
    ['src/core/host/x.ts', '../../shared/api'],
    ['src/core/host/x.ts', 'node:fs'],
  ])('in src/core, %s may import %s', async (file, specifier) => {
    expect(await packageMessages(corePackages, file, `import { x } from '${specifier}';\nexport const y = x;\n`)).toEqual([]);
  });

  it('reports an import that closes a cycle within a layer, naming the path; the same import without the way back passes', async () => {
    const root = scratchRoot({
      'a/one.ts': 'export const one = 1;\n',
      'b/two.ts': "import { three } from '../c/three';\nexport const two = three;\n",
      'c/three.ts': "import type { One } from '../a/types';\nexport const three = 3 as One;\n",
      'a/types.ts': 'export type One = number;\n',
    });
    const options = { root, layers: [['a', 'b', 'c']] };
    const code = "import { two } from '../b/two';\nexport const four = two;\n";
    const messages = await packageMessages(options, join(root, 'a/four.ts'), code);
    expect(messages).toEqual(['This import forms a package cycle in src: a -> b (a/four.ts) -> c (b/two.ts) -> a (c/three.ts).']);
    // c's way back to a removed: the same import is fine.
    writeFileSync(join(root, 'c/three.ts'), 'export const three = 3;\n');
    expect(await packageMessages(options, join(root, 'a/four.ts'), code)).toEqual([]);
  });

  it('reports a package placed in no layer, and skips a listed exception (cycles are counted without it)', async () => {
    const root = scratchRoot({ 'low/x.ts': "import { y } from '../high/y';\nexport const x = y;\n", 'high/y.ts': 'export const y = 1;\n' });
    const layers = [['low'], ['high']];
    const against = await packageMessages({ root, layers }, join(root, 'low/x.ts'), "import { y } from '../high/y';\nexport const x = y;\n");
    expect(against).toEqual([expect.stringContaining('low (layer 0) may not import high (layer 1)')]);
    const excepted = { root, layers, exceptions: [{ from: 'low/x.ts', to: 'high', why: 'planted' }] };
    expect(await packageMessages(excepted, join(root, 'low/x.ts'), "import { y } from '../high/y';\nexport const x = y;\n")).toEqual([]);
    // high -> low is down the order, and the excepted edge does not make it a cycle.
    expect(await packageMessages(excepted, join(root, 'high/z.ts'), "import { x } from '../low/x';\nexport const z = x;\n")).toEqual([]);
    expect(await packageMessages({ root, layers }, join(root, 'new/z.ts'), "import { y } from '../high/y';\nexport const z = y;\n")).toEqual([
      expect.stringContaining('Package "new" of src has no place in the package order (low < high)'),
    ]);
  });

  it('in a flat folder (src/shared), a type-only import that closes a cycle of modules is reported', async () => {
    const root = scratchRoot({
      'api.ts': "import type { Detail } from './suites';\nexport type Api = Detail;\n",
      'suites.ts': "import type { MeanStd } from './analysis';\nexport type Detail = MeanStd;\n",
      'analysis.ts': 'export type MeanStd = number;\n',
    });
    const options = { root, granularity: 'file' as const };
    const planted = "import type { Api } from './api';\nexport type MeanStd = Api;\n";
    expect(await packageMessages(options, join(root, 'analysis.ts'), planted)).toEqual([
      'This import forms a package cycle in src: analysis -> api (analysis.ts) -> suites (api.ts) -> analysis (suites.ts).',
    ]);
    expect(await packageMessages(options, join(root, 'other.ts'), planted)).toEqual([]);
  });

  it('every listed exception is still in the tree (remove it once its import is gone)', () => {
    for (const x of corePackages.exceptions ?? []) {
      const file = join(corePackages.root, x.from);
      expect(existsSync(file), `${file} (exception ${x.from} -> ${x.to})`).toBe(true);
      const text = readFileSync(file, 'utf8');
      expect(text, `${x.from} no longer imports ${x.to}: remove the exception`).toMatch(new RegExp(`from '\\.\\./${x.to}/`));
    }
  });
});
