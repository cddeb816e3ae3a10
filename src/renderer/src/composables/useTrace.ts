/**
 * The trace viewer's state: the filtered event list of a run (paged from listEvents, more loaded
 * on demand), the selected event with its members (getEvent) and its episode (getEpisode), and
 * navigation: next/previous event, next/previous episode (the first listed event of the next
 * episode in list order). Stale responses are dropped, so fast key repeats never show an older
 * event over a newer one.
 *
 * Speed (a j step should paint in well under 50 ms, bench/ui.bench.ts `trace_step_ms`): details
 * already fetched are kept (a few dozen, by id: stored events do not change), and when a step
 * lands on one whose detail and episode are both here it is shown synchronously, in the key's own
 * task, so the next frame paints it. Every selection prefetches its neighbours (the next two
 * events and the previous one, with their episodes), so steps with j or k normally land on cached
 * details; a cold selection fetches its event and episode in parallel (the episode only when it
 * differs from the one shown). The next list page is fetched before the end of the list is reached.
 * Details live in shallowRefs and are never made deeply reactive (their token arrays are large
 * and read-only).
 *
 * Also: the run itself (its config: set normalisation, clip, advantage options and workflow, for
 * the event card's explanations and the filters' options); the sort order of the list ('list' =
 * stored (step, id) order; by advantage, ratio or contribution |A x rho|, descending: a sorted
 * list first loads every matching event, up to SORT_LIMIT, so the ranking covers them all); the
 * selected event's group (the complete events of its step, kind and group key, whose rewards the
 * advantage came from; one listEvents per (step, kind), kept); and the live tail: while the run
 * trains, each committed step's matching events are appended (re-sorted when sorted), the
 * selection kept, once the list has reached its end.
 */
import { computed, ref, shallowRef, type Ref } from 'vue';
import type { ApiOutputs, RunDetail } from '../../../shared/api';
import type { EventCursor, EventFilter, EventSummary } from '../../../shared/records';
import { sortEvents, type SortKey } from '../../../shared/traceExplain';
import { labClient } from '../api/client';
import { usePushes } from './usePushes';

const PAGE = 200;
/** Fetched event details and episodes kept, each. */
const KEEP = 64;
/** Fetch the next page when the selection comes this close to the end of the list. */
const PAGE_AHEAD = 20;
/** Neighbours prefetched around a selection, by offset in the list (nearest first). */
const NEIGHBOURS = [1, 2, -1] as const;
/** Most events a sorted list loads (pages of 1000) before ranking them. */
export const SORT_LIMIT = 5000;
/** (step, kind) lists kept for the group explanation. */
const GROUPS_KEPT = 32;

/** The selected event's group: the complete events of its step that share its group key. */
export interface TraceGroup {
  eventId: number;
  group: string;
  events: EventSummary[];
}

/**
 * A promise per id, fetched once and kept (oldest dropped above KEEP); a failed fetch is
 * forgotten. `peek` gives a value that has arrived, synchronously.
 */
function memo<T>(fetch: (id: number) => Promise<T>) {
  const kept = new Map<number, Promise<T>>();
  const arrived = new Map<number, T>();
  const get = (id: number): Promise<T> => {
    let p = kept.get(id);
    if (!p) {
      const mine = fetch(id);
      p = mine;
      kept.set(id, mine);
      mine.then(
        (v) => kept.get(id) === mine && arrived.set(id, v),
        () => kept.get(id) === mine && kept.delete(id),
      );
      if (kept.size > KEEP) {
        const oldest = kept.keys().next().value as number;
        kept.delete(oldest);
        arrived.delete(oldest);
      }
    }
    return p;
  };
  const clear = () => {
    kept.clear();
    arrived.clear();
  };
  return { get, peek: (id: number): T | undefined => arrived.get(id), clear };
}

export function useTrace(runId: Ref<number>) {
  const api = labClient();
  const filter = ref<EventFilter>({});
  /** Loaded events in list order; `events` is what is shown (sorted when asked). */
  let loaded: EventSummary[] = [];
  const events = shallowRef<EventSummary[]>([]);
  const sort = ref<SortKey>('list');
  const sortDir = ref<'desc' | 'asc'>('desc');
  /** True when a sorted list stopped at SORT_LIMIT events. */
  const truncated = ref(false);
  const run = shallowRef<RunDetail | null>(null);
  const group = shallowRef<TraceGroup | null>(null);
  const next = ref<EventCursor | null>(null);
  const index = ref(-1);
  const event = shallowRef<ApiOutputs['getEvent'] | null>(null);
  const episode = shallowRef<ApiOutputs['getEpisode'] | null>(null);
  const loading = ref(false);
  const error = ref<string | null>(null);
  let seq = 0;
  const details = memo((eventId) => api.getEvent({ eventId }));
  const episodes = memo((episodeId) => api.getEpisode({ episodeId }));
  const groupLists = new Map<string, Promise<EventSummary[]>>();

  /** Shows `loaded` in the chosen order; the selection follows its event. */
  function present(): void {
    const selectedId = events.value[index.value]?.id;
    events.value = sort.value === 'list' ? loaded : sortEvents(loaded, sort.value, sortDir.value);
    if (selectedId !== undefined) index.value = events.value.findIndex((e) => e.id === selectedId);
  }

  /** Every remaining page (up to SORT_LIMIT events), for a sorted list. */
  async function loadRest(my: number): Promise<void> {
    while (next.value && loaded.length < SORT_LIMIT) {
      const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: 1000, after: next.value });
      if (my !== seq) return;
      loaded = [...loaded, ...page.events];
      next.value = page.next;
    }
    truncated.value = next.value !== null;
  }

  async function reload(): Promise<void> {
    const my = ++seq;
    loading.value = true;
    error.value = null;
    try {
      if (run.value?.id !== runId.value) {
        api.getRun({ runId: runId.value }).then(
          (r) => (run.value = r),
          (e) => (error.value = (e as Error).message),
        );
      }
      const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE });
      if (my !== seq) return;
      details.clear();
      episodes.clear();
      groupLists.clear();
      loaded = page.events;
      next.value = page.next;
      truncated.value = false;
      if (sort.value !== 'list') await loadRest(my);
      if (my !== seq) return;
      index.value = -1;
      present();
      event.value = null;
      episode.value = null;
      group.value = null;
      if (events.value.length) await select(0);
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      if (my === seq) loading.value = false;
    }
  }

  /** Changes the order; a sorted list loads every matching event first. The selection is kept. */
  async function setSort(key: SortKey, dir: 'desc' | 'asc' = 'desc'): Promise<void> {
    sort.value = key;
    sortDir.value = dir;
    if (key !== 'list' && next.value) {
      loading.value = true;
      try {
        await loadRest(seq);
      } finally {
        loading.value = false;
      }
    }
    present();
    if (index.value < 0 && events.value.length) await select(0);
  }

  let more: Promise<boolean> | null = null;
  /** Appends the next page (one fetch at a time; a call during a fetch waits for it). A sorted list has loaded all it will. */
  function loadMore(): Promise<boolean> {
    if (more) return more;
    if (!next.value || sort.value !== 'list') return Promise.resolve(false);
    const my = seq;
    more = (async () => {
      try {
        const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE, after: next.value });
        if (my !== seq) return false;
        loaded = [...loaded, ...page.events];
        events.value = loaded;
        next.value = page.next;
        return page.events.length > 0;
      } finally {
        more = null;
      }
    })();
    return more;
  }

  let tailing: Promise<void> | null = null;
  /**
   * Live: appends the events committed since the last loaded one (keyset after it), when the list
   * has reached its end (a list with pages still to load gets them on demand anyway).
   */
  function loadTail(): Promise<void> {
    if (tailing || next.value || loading.value) return tailing ?? Promise.resolve();
    const my = seq;
    tailing = (async () => {
      try {
        const last = loaded[loaded.length - 1];
        const after: EventCursor | null = last ? { step: last.step, id: last.id } : null;
        // List order: one page, the rest stays a next page (loaded on demand). Sorted: every new
        // event up to SORT_LIMIT, since the ranking must cover them.
        const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE, after });
        if (my !== seq || !page.events.length) return;
        loaded = [...loaded, ...page.events];
        next.value = page.next;
        if (sort.value !== 'list') await loadRest(my);
        if (my !== seq) return;
        present();
        if (index.value < 0 && events.value.length && !event.value) await select(0);
      } catch {
        // A failed tail read is retried on the next step's push.
      } finally {
        tailing = null;
      }
    })();
    return tailing;
  }
  usePushes(
    (p) => {
      if (p.type === 'progress') void loadTail();
    },
    () => runId.value,
  );

  /** The selected event's group (complete events of its step, kind and group key), fetched after the selection is shown. */
  async function loadGroup(e: EventSummary): Promise<void> {
    // An evaluation's events share steps (and, on dataset files, group keys) with training's: the group is the list's split.
    const split = filter.value.split;
    const key = `${e.step}/${e.kind}/${split ?? ''}`;
    let list = groupLists.get(key);
    if (!list) {
      list = api
        .listEvents({ runId: runId.value, filter: { fromStep: e.step, toStep: e.step, kind: e.kind, complete: true, split }, limit: 1000 })
        .then((p) => p.events);
      groupLists.set(key, list);
      list.catch(() => groupLists.delete(key));
      if (groupLists.size > GROUPS_KEPT) groupLists.delete(groupLists.keys().next().value as string);
    }
    try {
      const all = await list;
      if (event.value?.id !== e.id) return;
      group.value = { eventId: e.id, group: e.group, events: all.filter((x) => x.group === e.group) };
    } catch {
      // The card says the group could not be read (group stays null).
    }
  }

  /** Starts fetching the details (and episodes) around list position i, and the next page near the end. */
  function prefetchAround(i: number): void {
    const here = events.value[i];
    for (const d of NEIGHBOURS) {
      const e = events.value[i + d];
      if (!e) continue;
      details.get(e.id).catch(() => undefined);
      if (e.episodeId !== here?.episodeId) episodes.get(e.episodeId).catch(() => undefined);
    }
    if (next.value && i >= events.value.length - PAGE_AHEAD) loadMore().catch(() => undefined);
  }

  let selSeq = 0;
  async function select(i: number): Promise<void> {
    if (i < 0) return;
    if (i >= events.value.length && !(await loadMore())) return;
    if (i >= events.value.length) return;
    index.value = i;
    const my = ++selSeq;
    const summary = events.value[i];
    const shownEpisode = episode.value?.id === summary.episodeId ? episode.value : null;
    // Cached: show it now, in this task (the key's), so the next frame paints it.
    const cached = details.peek(summary.id);
    const cachedEpisode = shownEpisode ?? episodes.peek(summary.episodeId);
    if (cached && cachedEpisode) {
      event.value = cached;
      episode.value = cachedEpisode;
      prefetchAround(i);
      void loadGroup(summary);
      return;
    }
    // Not cached: its own fetches first, then the neighbours' behind them.
    const pending = Promise.all([details.get(summary.id), shownEpisode ?? episodes.get(summary.episodeId)]);
    prefetchAround(i);
    try {
      const [detail, ep] = await pending;
      if (my !== selSeq) return;
      event.value = detail;
      episode.value = ep;
      void loadGroup(summary);
    } catch (e) {
      if (my === selSeq) error.value = (e as Error).message;
    }
  }

  /** Selects an event by id from the list (the timeline's click). */
  async function selectId(eventId: number): Promise<void> {
    const i = events.value.findIndex((e) => e.id === eventId);
    if (i >= 0) await select(i);
    else {
      // Not in the filtered list: show it anyway.
      event.value = await details.get(eventId);
      void loadGroup(event.value);
    }
  }

  const current = computed(() => events.value[index.value] ?? null);

  async function nextEpisode(dir: 1 | -1): Promise<void> {
    const cur = current.value;
    if (!cur) return;
    if (dir === 1) {
      let i = index.value + 1;
      for (;;) {
        if (i >= events.value.length && !(await loadMore())) return;
        if (events.value[i].episodeId !== cur.episodeId) return select(i);
        i++;
      }
    }
    // Back: to the first listed event of the previous episode.
    let i = index.value - 1;
    while (i >= 0 && events.value[i].episodeId === cur.episodeId) i--;
    if (i < 0) return;
    const ep = events.value[i].episodeId;
    while (i > 0 && events.value[i - 1].episodeId === ep) i--;
    return select(i);
  }

  return {
    filter,
    run,
    group,
    sort,
    sortDir,
    truncated,
    setSort,
    loadTail,
    events,
    index,
    event,
    episode,
    current,
    loading,
    error,
    hasMore: computed(() => next.value !== null),
    reload,
    loadMore,
    select,
    selectId,
    nextEvent: () => select(index.value + 1),
    prevEvent: () => select(index.value - 1),
    nextEpisode: () => nextEpisode(1),
    prevEpisode: () => nextEpisode(-1),
  };
}
