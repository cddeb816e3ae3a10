/**
 * The folders a web client may name files under (`srpo-lab serve --allow DIR`, repeatable;
 * default: the lab database's folder and the lab's resources/). Web mode's API takes paths from
 * whoever holds the token (dataset files, corpora, `policies.init`); without roots it would read,
 * hash and describe any file the server's user can read (issue 26: `/etc/shadow` hashed, its
 * first bytes quoted, and "does not exist" / "is not a folder" answered for any path).
 *
 * A path is allowed when its real path (symlinks resolved, as the kernel would follow them) lies
 * in a root's real path. A path that does not exist is judged by its nearest existing ancestor;
 * an entry that exists but cannot be resolved (a dangling or looping link, an unreadable folder)
 * is refused. Every refused path gets the same sentence, whatever is or is not there: the check
 * must not become a way to learn what exists outside the roots.
 *
 * The desktop app and the CLI have no roots (any path, as before): a LabService without
 * `pathRoots` skips this. Not here: what a path must be once allowed (config/initPath.ts,
 * data/datasetTasks.ts). Tests: test/core/config/webRoots.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applySets, labRoot, PRESET_NAMES, presetInput } from '../config';
import { resolveSuiteSpec, suiteRows } from '../suites/spec';
import { isInside } from '../util/fsErrors';
import type { FieldProblem } from '../util/schemaError';

/** The real path of `abs`, following symlinks of its existing part; null when an existing entry cannot be resolved. */
function realPathOf(abs: string): string | null {
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(cur), ...tail);
    } catch {
      // Something is there but does not resolve (dangling or looping link, no permission): refuse.
      try {
        fs.lstatSync(cur);
        return null;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') return null;
      }
      const parent = path.dirname(cur);
      if (parent === cur) return null;
      tail.unshift(path.basename(cur));
      cur = parent;
    }
  }
}

export class PathRoots {
  /** The roots' real paths. */
  readonly dirs: readonly string[];

  /** Throws naming a root that is not an existing folder. */
  constructor(dirs: readonly string[]) {
    this.dirs = [
      ...new Set(
        dirs.map((d) => {
          const abs = path.resolve(d);
          let real: string;
          try {
            real = fs.realpathSync.native(abs);
          } catch {
            throw new Error(`allowed folder "${abs}" does not exist`);
          }
          if (!fs.statSync(real).isDirectory()) throw new Error(`allowed folder "${abs}" is not a folder`);
          return real;
        }),
      ),
    ];
  }

  /** serve's default: the lab database's folder and the lab's resources/ (where presets' warm starts live). */
  static defaults(dbPath: string): string[] {
    const resources = path.join(labRoot(), 'resources');
    return [path.dirname(path.resolve(dbPath)), ...(fs.existsSync(resources) ? [resources] : [])];
  }

  /** Whether `abs` (an absolute path) lies in a root once its symlinks are resolved. */
  allows(abs: string): boolean {
    const real = realPathOf(abs);
    return real !== null && this.dirs.some((d) => isInside(real, d));
  }

  /** The one sentence for every refused path (it quotes only what the client sent). */
  refusal(given: string): string {
    return `"${given}" is outside the folders this server may read (${this.dirs.join(', ')}); whoever started it can add one with srpo-lab serve --allow DIR`;
  }
}

/**
 * One path a config names: its field, the value, the folder a relative value is taken from, and
 * whether it is a data file (hashed when the run is created) or a folder.
 */
export interface NamedPath {
  field: string;
  value: string;
  base: string;
  kind: 'data' | 'folder';
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const at = (v: unknown, key: string): unknown => (isRecord(v) && Object.hasOwn(v, key) ? v[key] : undefined);
/** `$NAME` names a slot filled from tasks.paths (checked there), not a file. */
const isPath = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && !v.startsWith('$');

/**
 * Every path field of a run config, raw (a request, before the schema) or resolved alike. Dataset
 * files and corpora are taken from the working directory (runConfig.ts stampDataFiles),
 * `policies.init` from the lab's folder (initPath.ts). A new path field is one entry here.
 */
const PATH_FIELDS = {
  datasets: (c) =>
    (['train', 'eval'] as const).flatMap((list) => {
      const entries = at(at(c, 'tasks'), list);
      if (!Array.isArray(entries)) return [];
      return entries.flatMap((e, i) => {
        const dataset = at(e, 'dataset');
        return isPath(dataset) ? [{ field: `tasks.${list}.${i}.dataset`, value: dataset, base: process.cwd(), kind: 'data' as const }] : [];
      });
    }),
  slots: (c) => {
    const paths = at(at(c, 'tasks'), 'paths');
    if (!isRecord(paths)) return [];
    return Object.entries(paths).flatMap(([slot, v]) =>
      isPath(v) ? [{ field: `tasks.paths.${slot}`, value: v, base: process.cwd(), kind: 'data' as const }] : [],
    );
  },
  corpus: (c) => {
    const corpus = at(at(at(c, 'workflow'), 'options'), 'corpus');
    return isPath(corpus) ? [{ field: 'workflow.options.corpus', value: corpus, base: process.cwd(), kind: 'data' }] : [];
  },
  init: (c) => {
    const init = at(at(c, 'policies'), 'init');
    return isPath(init) ? [{ field: 'policies.init', value: init, base: labRoot(), kind: 'folder' }] : [];
  },
} satisfies Record<string, (config: unknown) => NamedPath[]>;

/** Every path a config names, with its field and the absolute path it means. */
export function configPaths(config: unknown): (NamedPath & { abs: string })[] {
  return Object.values(PATH_FIELDS).flatMap((read: (c: unknown) => NamedPath[]) => read(config).map((p) => ({ ...p, abs: path.resolve(p.base, p.value) })));
}

/** The path fields of `config` outside `roots`, one problem each, in the same words whatever is there. */
export function outsideRootProblems(config: unknown, roots: PathRoots): FieldProblem[] {
  return configPaths(config).flatMap((p) => (roots.allows(p.abs) ? [] : [{ path: p.field, message: roots.refusal(p.value) }]));
}

/**
 * The run-config inputs a suite spec will resolve (one per row, before seeds), for the checks
 * that must come before anything is read; empty when the spec is invalid (creating it says why).
 */
export function suiteRowInputs(raw: unknown): { label: string; input: Record<string, unknown> }[] {
  let rows;
  try {
    rows = suiteRows(resolveSuiteSpec(raw));
  } catch {
    return [];
  }
  return rows.flatMap((r) => {
    if (r.preset !== null && !(PRESET_NAMES as readonly string[]).includes(r.preset)) return [];
    try {
      return [{ label: r.label, input: applySets(r.preset ? presetInput(r.preset) : {}, r.sets) }];
    } catch {
      return [];
    }
  });
}
