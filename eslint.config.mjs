// ESLint flat config (`npm run lint`, in .ci/run before the tests).
//
// What it is: typescript-eslint's recommended rules (type-aware on the .ts files outside test/), eslint-plugin-vue's
// recommended rules on the renderer's .vue files, a few rules that catch real mistakes (eqeqeq,
// floating promises, max-len 160), and the layering of docs/ARCHITECTURE.md as `no-restricted-imports`
// per folder: src/core never imports electron, vue or the UI; src/shared stays browser-safe; the
// renderer reaches the rest only through src/shared and its API client.
// What it is not: a formatter. Layout is Prettier's (`.prettierrc.json`: width 160, single quotes;
// `npm run lint` runs `prettier --check .` beside ESLint: scripts/lint.mjs; `npm run format` rewrites);
// eslint-config-prettier switches off the rules that would fight it. max-len stays: Prettier does
// not break long strings or comments.
// Inside src/core, the packages (its folders) import each other only down one order, and neither
// they nor src/shared's modules form a cycle: `local/package-layers` (eslint-rules/packageLayers.mjs),
// with the order and the known exceptions below (corePackages, sharedPackages).
// How it is tested: `npm run lint` passes on the tree; test/layering.test.ts checks that this file
// still holds the layering rules, that they fire on a forbidden import, a package imported against
// the order and a planted cycle, and that the tree passes them.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettierConfig from 'eslint-config-prettier';
import pluginVue from 'eslint-plugin-vue';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import packageLayers from './eslint-rules/packageLayers.mjs';

// ---- Layering (docs/ARCHITECTURE.md "Code layout") -------------------------------------------
// Each entry: a folder, then what its files may not import. Relative paths are matched by glob on
// the import specifier (`**/renderer/**` catches '../../renderer/src/x'), packages by name.

/** UI and Electron packages: never in src/core or src/shared. */
const uiPackages = ['electron', 'electron/*', 'vue', 'vue/*', 'pinia', 'echarts', 'echarts/*', 'vue-echarts'];
/** Node built-ins and native modules: never in code the renderer bundles. */
const nodeModules = [
  'node:*',
  'fs',
  'fs/*',
  'path',
  'os',
  'child_process',
  'worker_threads',
  'crypto',
  'http',
  'net',
  'stream',
  'url',
  'module',
  'better-sqlite3',
  '@tensorflow/tfjs-node',
  '@tensorflow/tfjs-node-gpu',
];
const folders = (...names) => names.map((n) => `**/${n}/**`);

/** `no-restricted-imports` options from a list of forbidden package/path globs and the reason. */
function forbid(groups) {
  return ['error', { patterns: groups.map(({ group, message }) => ({ group, message })) }];
}

export const layering = {
  'src/core': forbid([
    { group: uiPackages, message: 'src/core is pure TypeScript on Node: no electron, vue or UI packages (docs/ARCHITECTURE.md).' },
    {
      group: folders('renderer', 'main', 'preload', 'engine', 'server', 'cli'),
      message: 'src/core never imports the layers above it (renderer, main, preload, engine, server, cli).',
    },
  ]),
  'src/shared': forbid([
    { group: [...nodeModules, ...uiPackages], message: 'src/shared is bundled by the renderer: browser-safe, no Node or Electron modules.' },
    {
      group: folders('core', 'renderer', 'main', 'preload', 'engine', 'server', 'cli'),
      message: 'src/shared imports nothing outside src/shared (the renderer bundles it).',
    },
  ]),
  'src/renderer': forbid([
    { group: [...nodeModules, 'electron', 'electron/*'], message: 'The renderer runs in the browser: no Node modules; Electron only via the preload.' },
    {
      group: folders('core', 'main', 'preload', 'engine', 'server', 'cli'),
      message: 'The renderer reaches the lab through src/shared/api.ts and api/client.ts, never src/core or the Node layers.',
    },
  ]),
};

/**
 * The packages of src/core, lowest first: a file may import a package of a lower layer, or of its
 * own layer unless that forms a cycle; never one of a higher layer. util: plain helpers; eval and
 * store: grading, and the database, which know no model; srpo (the objective), models and data;
 * workflows, policies, external (the OpenAI-compatible endpoint of external agents) and config
 * (the run config, which names workflows, models and data); rollout; train and suites (a suite's
 * spec and tables); host (runs, the queue, the API service).
 */
export const corePackages = {
  root: 'src/core',
  layers: [
    ['util'],
    ['eval', 'store'],
    ['srpo', 'models', 'data'],
    ['workflows', 'policies', 'external', 'config'],
    ['rollout'],
    ['train', 'suites'],
    ['host'],
  ],
  /**
   * Imports known to go against the order, each with its reason: to be moved, then removed from
   * here (test/layering.test.ts fails on one no longer in the tree).
   */
  exceptions: [],
};
/** src/shared: flat modules, no order, no cycles (a type-only cycle counts). */
export const sharedPackages = { root: 'src/shared', granularity: 'file' };
const local = { rules: { 'package-layers': packageLayers } };

/**
 * Issue 18 counted 125 lines over 160 characters (the longest 404). Long code and comments get
 * wrapped; a long message string stays one greppable literal (a formatter would not split it either).
 */
const maxLen = { code: 160, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true };

/** eslint-plugin-vue's layout rules (attribute wrapping, self-closing tags, indentation): off. */
const vueLayoutRulesOff = Object.fromEntries(
  Object.entries(pluginVue.rules)
    .filter(([, rule]) => rule.meta?.type === 'layout')
    .map(([name]) => [`vue/${name}`, 'off']),
);

/**
 * Where eslint-plugin-vue's rules run: the .vue files and the renderer's TypeScript (the only code
 * that imports vue, by the layering above). Its recommended config applies them to every file,
 * which cost ~3 s of a ~30 s lint on files that cannot hold a ref.
 */
const vueFiles = ['**/*.vue', 'src/renderer/**/*.ts', 'test/renderer/**/*.ts'];
const vueRecommended = pluginVue.configs['flat/recommended'].map((c) => (c.rules && !c.files ? { ...c, files: vueFiles } : c));

export default defineConfig(
  globalIgnores([
    'node_modules/**',
    'out/**',
    'dist/**',
    'coverage/**',
    'test-artifacts/**',
    'bench/results/**',
    'resources/**',
    '**/*.d.ts',
    '**/*.d.mts',
    'src/cli/srpo-lab.cjs',
  ]),

  js.configs.recommended,
  tseslint.configs.recommended,
  vueRecommended,
  prettierConfig,

  // Every file: the environment and the rules that catch mistakes rather than style.
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'max-len': ['error', maxLen],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // TypeScript checks names; the core rule does not know type-only globals.
      'no-undef': 'off',
      // Tests match aligned CLI tables with literal runs of spaces; `{2}` would read worse.
      'no-regex-spaces': 'off',
      // Layout is Prettier's job; max-len is the one layout rule kept.
      ...vueLayoutRulesOff,
    },
  },

  // Tests: `any` for JSON bodies and raw headers they poke at, `this` aliased by test doubles
  // that bind a class to the stand-in. src/ has neither.
  {
    files: ['test/**/*'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-this-alias': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },

  // Unused names in TypeScript and Vue files are TypeScript's (noUnusedLocals, noUnusedParameters in
  // tsconfig.node.json and tsconfig.web.json, which together hold every such file; `npm run
  // typecheck` runs before the lint in CI): the rule checks them again at ~5% of the lint's time.
  // It stays on for the JavaScript files, which no compiler reads.
  {
    files: ['**/*.ts', '**/*.mts', '**/*.vue'],
    rules: { '@typescript-eslint/no-unused-vars': 'off' },
  },

  // Type-aware rules on the TypeScript files outside test/, in one program (tsconfig.lint.json: the
  // Node and browser files together; a program per side built the shared files and libraries twice,
  // and a program with test/ in it was ~25% of the lint's time). Only the few that catch real bugs:
  // a promise nobody awaits or catches.
  // Not on test/: vitest already awaits an assertion's forgotten promise at the end of its test
  // (and says so), and fails a test on an unhandled rejection; the types of its expect() chains were
  // ~15% of the lint's time. Not no-misused-promises (with checksVoidReturn off, a promise used as a
  // condition): TypeScript already refuses one written in an if, a ternary or an && condition
  // (TS2801), and the rule was ~35% of the lint's rule time (TIMING=1 npx eslint .).
  {
    files: ['**/*.ts', '**/*.mts'],
    ignores: ['test/**'],
    languageOptions: { parserOptions: { project: ['./tsconfig.lint.json'], tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },

  // The renderer and the browser pages of the benchmarks: browser globals, Vue files parsed as TS.
  {
    files: ['src/renderer/**/*', 'bench/page/**/*', 'test/renderer/**/*'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.vue'] } },
    rules: {
      // The same 160 on script and template code; prose between tags and <style> blocks are left to
      // the formatter (core max-len would count a sentence of help text like a line of code).
      'max-len': 'off',
      'vue/max-len': ['error', { ...maxLen, ignoreHTMLTextContents: true }],
    },
  },

  // Layering.
  { files: ['src/core/**/*.ts'], rules: { 'no-restricted-imports': layering['src/core'] } },
  { files: ['src/shared/**/*.ts'], rules: { 'no-restricted-imports': layering['src/shared'] } },
  { files: ['src/renderer/**/*.{ts,vue}'], rules: { 'no-restricted-imports': layering['src/renderer'] } },
  { files: ['src/core/**/*.ts'], plugins: { local }, rules: { 'local/package-layers': ['error', corePackages] } },
  { files: ['src/shared/**/*.ts'], plugins: { local }, rules: { 'local/package-layers': ['error', sharedPackages] } },
  {
    files: ['src/core/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'window', message: 'src/core and src/shared do not touch the DOM.' },
        { name: 'document', message: 'src/core and src/shared do not touch the DOM.' },
      ],
    },
  },
);
