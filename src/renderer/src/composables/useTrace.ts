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
 */
import { computed, ref, shallowRef, type Ref } from 'vue';
import type { EpisodeDto, EventCursorDto, EventDetailDto, EventFilterInput, EventSummaryDto } from '../../../shared/api';
import { labClient } from '../api/client';

const PAGE = 200;
/** Fetched event details and episodes kept, each. */
const KEEP = 64;
/** Fetch the next page when the selection comes this close to the end of the list. */
const PAGE_AHEAD = 20;
/** Neighbours prefetched around a selection, by offset in the list (nearest first). */
const NEIGHBOURS = [1, 2, -1] as const;

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
  const filter = ref<EventFilterInput>({});
  const events = shallowRef<EventSummaryDto[]>([]);
  const next = ref<EventCursorDto | null>(null);
  const index = ref(-1);
  const event = shallowRef<EventDetailDto | null>(null);
  const episode = shallowRef<EpisodeDto | null>(null);
  const loading = ref(false);
  const error = ref<string | null>(null);
  let seq = 0;
  const details = memo((eventId) => api.getEvent({ eventId }));
  const episodes = memo((episodeId) => api.getEpisode({ episodeId }));

  async function reload(): Promise<void> {
    const my = ++seq;
    loading.value = true;
    error.value = null;
    try {
      const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE });
      if (my !== seq) return;
      details.clear();
      episodes.clear();
      events.value = page.events;
      next.value = page.next;
      index.value = -1;
      event.value = null;
      episode.value = null;
      if (page.events.length) await select(0);
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      if (my === seq) loading.value = false;
    }
  }

  let more: Promise<boolean> | null = null;
  /** Appends the next page (one fetch at a time; a call during a fetch waits for it). */
  function loadMore(): Promise<boolean> {
    if (more) return more;
    if (!next.value) return Promise.resolve(false);
    const my = seq;
    more = (async () => {
      try {
        const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE, after: next.value });
        if (my !== seq) return false;
        events.value = [...events.value, ...page.events];
        next.value = page.next;
        return page.events.length > 0;
      } finally {
        more = null;
      }
    })();
    return more;
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
