/**
 * The New run form's state: the run config as editable leaves (one per ConfigField), seeded from
 * a preset's resolved config, rebuilt into a config object, validated by the lab (validateConfig,
 * debounced) into inline field errors and a diff against the preset. Local parse problems (a
 * number field holding text, bad JSON) are reported per field before the lab is asked, and such a
 * leaf is left out of what the lab checks, so a field has one message, not two. The form can be
 * seeded from another config (Clone and edit) and keeps a user's edits across a preset switch
 * (`edits` / `reset(base, keep)`).
 *
 * A field with conditions (`when`: the chosen workflow's options, a K mode's own fields, LoRA's
 * fields while an adapter is on) is shown and sent only while they hold. `changes` lists every
 * leaf that differs from the preset, valid or not (an edit the lab refuses is still a change; it
 * is marked invalid), so "Changes from PRESET" never says "none" while the form holds edits.
 * Tested by test/e2e/newRun.test.ts.
 */
import { computed, onScopeDispose, ref, watch, type Ref } from 'vue';
import { flatten } from '../../../shared/analysis';
import type { ConfigDiffEntry, ConfigField, FieldError, PresetInfo } from '../../../shared/api';
import { labClient } from '../api/client';

/** Kinds whose state is a value (a choice, a list); the others are text as typed. */
const VALUE_KINDS = new Set<ConfigField['kind']>(['enum', 'boolean', 'list', 'tasks']);

/** The text a field shows for a value. */
function toText(f: ConfigField, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (f.kind === 'json') return JSON.stringify(v);
  if (f.kind === 'lines') return Array.isArray(v) ? v.map(String).join('\n') : String(v);
  return String(v);
}

/** One edited leaf: its path, the preset's and the form's value as shown, and whether the lab refused it. */
export interface FormChange {
  path: string;
  before: string;
  after: string;
  invalid: boolean;
}

export function useConfigForm(fields: Ref<ConfigField[]>, preset: Ref<PresetInfo | null>) {
  /** Text of number / string / json fields; value of enum / boolean / list fields. */
  const texts = ref<Record<string, string>>({});
  const values = ref<Record<string, unknown>>({});
  const errors = ref<FieldError[]>([]);
  const diff = ref<ConfigDiffEntry[]>([]);
  const checking = ref(false);
  let timer: ReturnType<typeof setTimeout> | null = null;
  let seq = 0;

  /** The form's leaves for a config (a preset's, or a run's for Clone and edit). */
  function leavesOf(base: Record<string, unknown> | undefined) {
    const flat = base ? flatten(base) : {};
    const t: Record<string, string> = {};
    const v: Record<string, unknown> = {};
    for (const f of fields.value) {
      // A json field (a record) holds the whole sub-object, which flatten split up; a task list holds its entries.
      const value = f.kind === 'json' || f.kind === 'tasks' ? jsonAt(base, f.path) : flat[f.path];
      if (VALUE_KINDS.has(f.kind)) v[f.path] = f.noneNulls && value === undefined ? null : value;
      else t[f.path] = toText(f, value);
    }
    return { t, v };
  }

  /** Leaves the user changed from `base` (default: the current preset's config), with their current text / value. */
  function edits(base: Record<string, unknown> | undefined = preset.value?.config): { path: string; text?: string; value?: unknown }[] {
    const seeded = leavesOf(base);
    const out: { path: string; text?: string; value?: unknown }[] = [];
    for (const f of fields.value) {
      if (VALUE_KINDS.has(f.kind)) {
        if (JSON.stringify(values.value[f.path]) !== JSON.stringify(seeded.v[f.path])) out.push({ path: f.path, value: values.value[f.path] });
      } else if ((texts.value[f.path] ?? '') !== (seeded.t[f.path] ?? '')) out.push({ path: f.path, text: texts.value[f.path] ?? '' });
    }
    return out;
  }

  /** Seeds every leaf from `base` (default: the preset's config), then re-applies `keep` (edits carried over). */
  function reset(base: Record<string, unknown> | undefined = preset.value?.config, keep: ReturnType<typeof edits> = []) {
    const { t, v } = leavesOf(base);
    for (const e of keep) {
      if ('value' in e) v[e.path] = e.value;
      else t[e.path] = e.text ?? '';
    }
    texts.value = t;
    values.value = v;
  }

  /** Whether a field is shown (and sent): every condition holds on the form's current choices. */
  function visible(f: ConfigField): boolean {
    return (f.when ?? []).every((c) => {
      const v = values.value[c.path];
      return typeof v === 'string' && c.in.includes(v);
    });
  }

  /** Leaves that do not even parse locally. */
  const localErrors = computed<FieldError[]>(() => {
    const out: FieldError[] = [];
    for (const f of fields.value) {
      if (!visible(f)) continue;
      const s = texts.value[f.path];
      if (s === undefined || s.trim() === '') continue;
      if ((f.kind === 'number' || f.kind === 'integer') && !Number.isFinite(Number(s)))
        out.push({ path: f.path, message: f.kind === 'integer' ? 'must be a whole number' : 'must be a number' });
      if (f.kind === 'json') {
        try {
          JSON.parse(s);
        } catch {
          out.push({ path: f.path, message: 'not valid JSON' });
        }
      }
    }
    return out;
  });

  /** The config the form describes (a full config input; empty text = default, or null where allowed). */
  const config = computed<Record<string, unknown>>(() => {
    const out: Record<string, unknown> = {};
    for (const f of fields.value) {
      if (!visible(f)) continue;
      let v: unknown;
      if (f.noneNulls && (values.value[f.path] === null || values.value[f.path] === '')) {
        setAt(out, f.noneNulls, null); // "none": the whole object (policies.adapter) is null
        continue;
      }
      if (f.path in values.value) v = values.value[f.path];
      else if (f.kind === 'lines') {
        const items = (texts.value[f.path] ?? '')
          .split('\n')
          .map((x) => x.trim())
          .filter(Boolean);
        if (!items.length) continue;
        v = items;
      } else {
        const s = texts.value[f.path] ?? '';
        if (s.trim() === '') {
          if (!f.nullable) continue;
          v = null;
        } else if (f.kind === 'number' || f.kind === 'integer') {
          v = Number(s);
          if (!Number.isFinite(v)) continue; // reported locally (localErrors); the lab is not asked about it
        } else if (f.kind === 'json') {
          try {
            v = JSON.parse(s);
          } catch {
            continue;
          }
        } else v = s;
      }
      if (v === undefined) continue;
      setAt(out, f.path, v);
    }
    return out;
  });

  async function validate() {
    const my = ++seq;
    checking.value = true;
    try {
      const r = await labClient().validateConfig({ preset: preset.value?.name ?? null, config: config.value });
      if (my !== seq) return;
      // One message per field: a local parse problem wins over the lab's view of the same leaf.
      const local = localErrors.value;
      errors.value = [...local, ...r.errors.filter((e) => !local.some((l) => l.path === e.path))];
      diff.value = r.diff;
    } catch (e) {
      if (my === seq) errors.value = [{ path: '', message: (e as Error).message }];
    } finally {
      if (my === seq) checking.value = false;
    }
  }

  watch(
    [texts, values],
    () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void validate(), 200);
    },
    { deep: true },
  );
  onScopeDispose(() => timer && clearTimeout(timer));

  /** Errors of a field: those at its path or below it. */
  const errorsOf = (path: string) =>
    errors.value.filter(
      (e) =>
        e.path === path || e.path.startsWith(`${path}.`) || (e.path !== '' && path.startsWith(`${e.path}.`) && !fields.value.some((f) => f.path === e.path)),
    );

  /** Every leaf that differs from the preset, shown or not yet valid (marked), in field order. */
  const changes = computed<FormChange[]>(() => {
    const seeded = leavesOf(preset.value?.config);
    const shown = (f: ConfigField, v: unknown, text: string | undefined): string => {
      if (!VALUE_KINDS.has(f.kind)) return text === undefined || text.trim() === '' ? (f.nullable ? 'none' : 'default') : text.replace(/\n/g, ', ');
      if (v === null || v === undefined || v === '') return 'none';
      if (f.kind === 'tasks' && Array.isArray(v))
        return v.map((e) => (typeof e === 'string' ? e : String((e as { dataset?: unknown }).dataset ?? '?'))).join(', ');
      return typeof v === 'string' ? v : JSON.stringify(v);
    };
    const out: FormChange[] = [];
    for (const f of fields.value) {
      if (!visible(f)) continue;
      const isValue = VALUE_KINDS.has(f.kind);
      const before = isValue ? seeded.v[f.path] : seeded.t[f.path];
      const now = isValue ? values.value[f.path] : texts.value[f.path];
      const same = isValue ? JSON.stringify(before ?? null) === JSON.stringify(now ?? null) : (before ?? '') === (now ?? '');
      if (same) continue;
      out.push({
        path: f.path,
        before: shown(f, seeded.v[f.path], seeded.t[f.path]),
        after: shown(f, values.value[f.path], texts.value[f.path]),
        invalid: errorsOf(f.path).length > 0,
      });
    }
    return out;
  });

  /** Fields with a problem (a field with two messages counts once). */
  const problemFields = computed(() => new Set(errors.value.map((e) => e.path)).size);

  return { texts, values, errors, diff, changes, checking, config, reset, edits, validate, errorsOf, problemFields, visible };
}

function jsonAt(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split('.')) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split('.');
  let cur = target;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Record<string, unknown>;
  cur[keys[keys.length - 1]] = value;
}
