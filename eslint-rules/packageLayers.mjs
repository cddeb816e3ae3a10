// ESLint rule `local/package-layers`: the packages inside one folder and the order they may
// import each other in, so the tree keeps no package cycle.
//
// What it is: for every relative import (type-only ones too: a type cycle is a cycle) from a file
// of package A to package B of the same root, it reports
//   - B in a higher layer than A ("goes against the layer order"),
//   - A or B placed in no layer (a new folder must be given its place),
//   - B in A's own layer when B already reaches A through the imports of the tree ("forms a
//     package cycle", with the path).
// A package is a direct sub-folder of `root` (granularity 'folder', src/core) or one module of a
// flat folder (granularity 'file', src/shared: no layers, cycles only). `exceptions` lists known
// imports against the rule, each with its reason; they are neither reported nor counted in cycles.
// The rest of the tree is read from disk (regex over import/export ... from '...'), the linted
// file from its own text, so the rule also works on text that is not on disk yet.
// What it is not: a file-level cycle check inside one package, or a check of non-relative imports
// (the `no-restricted-imports` layering in eslint.config.mjs covers packages and other layers).
// How it is tested: test/layering.test.ts (planted violations in memory, and the tree has none).
import fs from 'node:fs';
import path from 'node:path';

const SOURCE = /\.(ts|mts|vue)$/;
const IMPORT_RE = /(?:^|[\s;}])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** File -> { mtimeMs, specifiers } read from disk, refreshed when a file changes. */
const fileCache = new Map();

function sourceFiles(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function specifiersOnDisk(file) {
  const mtimeMs = fs.statSync(file).mtimeMs;
  const hit = fileCache.get(file);
  if (hit && hit.mtimeMs === mtimeMs) return hit.specifiers;
  const text = fs.readFileSync(file, 'utf8');
  const specifiers = [];
  for (const m of text.matchAll(IMPORT_RE)) specifiers.push(m[1] ?? m[2] ?? m[3]);
  fileCache.set(file, { mtimeMs, specifiers });
  return specifiers;
}

/** The package of an absolute path under root, or null outside it. */
function packageOf(root, granularity, abs) {
  const rel = path.relative(root, abs);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  if (granularity === 'file') return parts.length === 1 ? parts[0].replace(/\.(ts|mts|vue)$/, '') : parts[0];
  return parts.length === 1 ? null : parts[0]; // a file at the root itself belongs to no package
}

/** Options normalised: absolute root, layer rank by package, exceptions as "fromFile -> toPackage". */
function settings(options) {
  const root = path.resolve(options.root);
  const rank = new Map();
  (options.layers ?? []).forEach((layer, i) => layer.forEach((p) => rank.set(p, i)));
  const excepted = new Set((options.exceptions ?? []).map((x) => `${x.from} -> ${x.to}`));
  return { root, granularity: options.granularity ?? 'folder', layered: Boolean(options.layers), rank, excepted };
}

/** Package edges of the tree: from -> (to -> first file that imports it), the linted file's own edges replaced by `own`. */
function packageGraph(s, linted, own) {
  const graph = new Map();
  const add = (file, specifiers) => {
    const from = packageOf(s.root, s.granularity, file);
    if (from === null) return;
    const relFile = path.relative(s.root, file).split(path.sep).join('/');
    for (const spec of specifiers) {
      if (!spec.startsWith('.')) continue;
      const to = packageOf(s.root, s.granularity, path.resolve(path.dirname(file), spec));
      if (to === null || to === from || s.excepted.has(`${relFile} -> ${to}`)) continue;
      if (!graph.has(from)) graph.set(from, new Map());
      if (!graph.get(from).has(to)) graph.get(from).set(to, relFile);
    }
  };
  for (const file of sourceFiles(s.root)) if (file !== linted) add(file, specifiersOnDisk(file));
  add(linted, own);
  return graph;
}

/** A path of packages from `start` to `goal`, each after the first as `package (the file that imports it)`, or null. */
function findPath(graph, start, goal) {
  const prev = new Map([[start, null]]);
  const queue = [start];
  while (queue.length) {
    const p = queue.shift();
    if (p === goal) {
      const steps = [];
      for (let at = goal; prev.get(at); at = prev.get(at).from) steps.unshift(`${at} (${prev.get(at).file})`);
      return [start, ...steps];
    }
    for (const [to, file] of graph.get(p) ?? []) {
      if (prev.has(to)) continue;
      prev.set(to, { from: p, file });
      queue.push(to);
    }
  }
  return null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Packages of one folder import each other only down a layer order, and never in a cycle.' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          granularity: { enum: ['folder', 'file'] },
          layers: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
          exceptions: {
            type: 'array',
            items: {
              type: 'object',
              properties: { from: { type: 'string' }, to: { type: 'string' }, why: { type: 'string' } },
              required: ['from', 'to', 'why'],
              additionalProperties: false,
            },
          },
        },
        required: ['root'],
        additionalProperties: false,
      },
    ],
    messages: {
      against: '{{from}} (layer {{fromLayer}}) may not import {{to}} (layer {{toLayer}}): against the package order of {{root}} ({{order}}).',
      unplaced: 'Package "{{pkg}}" of {{root}} has no place in the package order ({{order}}): add it to the layers in eslint.config.mjs.',
      cycle: 'This import forms a package cycle in {{root}}: {{cycle}}.',
    },
  },
  create(context) {
    const s = settings(context.options[0]);
    const file = context.physicalFilename ?? context.filename;
    const from = packageOf(s.root, s.granularity, file);
    if (from === null) return {};
    const relFile = path.relative(s.root, file).split(path.sep).join('/');
    const rootName =
      path
        .relative(context.cwd ?? process.cwd(), s.root)
        .split(path.sep)
        .join('/') || s.root;
    const order = (context.options[0].layers ?? []).map((l) => l.join(' / ')).join(' < ') || 'no cycles';
    const found = [];
    const collect = (node) => {
      const spec = node.source?.value;
      if (typeof spec === 'string') found.push({ node: node.source, spec });
    };
    return {
      ImportDeclaration: collect,
      ExportNamedDeclaration: collect,
      ExportAllDeclaration: collect,
      ImportExpression: collect,
      'Program:exit'() {
        const relative = found.filter((f) => f.spec.startsWith('.'));
        let graph = null;
        for (const { node, spec } of relative) {
          const to = packageOf(s.root, s.granularity, path.resolve(path.dirname(file), spec));
          if (to === null || to === from || s.excepted.has(`${relFile} -> ${to}`)) continue;
          if (s.layered) {
            const unplaced = [from, to].find((p) => !s.rank.has(p));
            if (unplaced) {
              context.report({ node, messageId: 'unplaced', data: { pkg: unplaced, root: rootName, order } });
              continue;
            }
            const [a, b] = [s.rank.get(from), s.rank.get(to)];
            if (b > a) {
              context.report({ node, messageId: 'against', data: { from, to, fromLayer: a, toLayer: b, root: rootName, order } });
              continue;
            }
            if (b < a) continue; // down the order: never part of a cycle
          }
          graph ??= packageGraph(
            s,
            file,
            relative.map((f) => f.spec),
          );
          const back = findPath(graph, to, from);
          if (back)
            context.report({ node, messageId: 'cycle', data: { root: rootName, cycle: [`${from} -> ${to} (${relFile})`, ...back.slice(1)].join(' -> ') } });
        }
      },
    };
  },
};
