/**
 * The New run form's state: the run config as editable leaves (one per ConfigField), seeded from
 * a preset's resolved config, rebuilt into a config object, validated by the lab (validateConfig,
 * debounced) into inline field errors and a diff against the preset. Local parse problems (a
 * number field holding text, bad JSON) are reported per field before the lab is asked, and such a
 * leaf is left out of what the lab checks, so a field has one message, not two. The form can be
 * seeded from another config (Clone and edit) and keeps a user's edits across a preset switch
 * (`edits` / `reset(base, keep)`).
 */
import { computed, onScopeDispose, ref, watch, type Ref } from 'vue';
import { flatten } from '../../../shared/analysis';
import type { ConfigDiffEntry, ConfigField, FieldError, PresetInfo } from '../../../shared/api';
import { labClient } from '../api/client';

/** The text a field shows for a value. */
function toText(f: ConfigField, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (f.kind === 'json') return JSON.stringify(v);
  return String(v);
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
      // A json field (workflow.options) holds the whole sub-object, which flatten split up.
      const value = f.kind === 'json' ? jsonAt(base, f.path) : flat[f.path];
      if (f.kind === 'enum' || f.kind === 'boolean' || f.kind === 'list') v[f.path] = value;
      else t[f.path] = toText(f, value);
    }
    return { t, v };
  }

  /** Leaves the user changed from `base` (default: the current preset's config), with their current text / value. */
  function edits(base: Record<string, unknown> | undefined = preset.value?.config): { path: string; text?: string; value?: unknown }[] {
    const seeded = leavesOf(base);
    const out: { path: string; text?: string; value?: unknown }[] = [];
    for (const f of fields.value) {
      if (f.path in seeded.v) {
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

  /** Leaves that do not even parse locally. */
  const localErrors = computed<FieldError[]>(() => {
    const out: FieldError[] = [];
    for (const f of fields.value) {
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
      let v: unknown;
      if (f.path in values.value) v = values.value[f.path];
      else {
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

  /** Fields with a problem (a field with two messages counts once). */
  const problemFields = computed(() => new Set(errors.value.map((e) => e.path)).size);

  return { texts, values, errors, diff, checking, config, reset, edits, validate, errorsOf, problemFields };
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
