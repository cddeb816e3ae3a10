/**
 * The trace viewer's state: the filtered event list of a run (paged from listEvents, more loaded
 * on demand), the selected event with its members (getEvent) and its episode (getEpisode), and
 * navigation: next/previous event, next/previous episode (the first listed event of the next
 * episode in list order). Stale responses are dropped, so fast key repeats never show an older
 * event over a newer one.
 */
import { computed, ref, shallowRef, type Ref } from 'vue';
import type { EpisodeDto, EventCursorDto, EventDetailDto, EventFilterInput, EventSummaryDto } from '../../../shared/api';
import { labClient } from '../api/client';

const PAGE = 200;

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

  async function reload(): Promise<void> {
    const my = ++seq;
    loading.value = true;
    error.value = null;
    try {
      const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE });
      if (my !== seq) return;
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

  async function loadMore(): Promise<boolean> {
    if (!next.value) return false;
    const page = await api.listEvents({ runId: runId.value, filter: filter.value, limit: PAGE, after: next.value });
    events.value = [...events.value, ...page.events];
    next.value = page.next;
    return page.events.length > 0;
  }

  let selSeq = 0;
  async function select(i: number): Promise<void> {
    if (i < 0) return;
    if (i >= events.value.length && !(await loadMore())) return;
    if (i >= events.value.length) return;
    index.value = i;
    const my = ++selSeq;
    const summary = events.value[i];
    try {
      const [detail, ep] = await Promise.all([
        api.getEvent({ eventId: summary.id }),
        episode.value?.id === summary.episodeId ? Promise.resolve(episode.value) : api.getEpisode({ episodeId: summary.episodeId }),
      ]);
      if (my !== selSeq) return;
      event.value = detail;
      episode.value = ep;
    } catch (e) {
      error.value = (e as Error).message;
    }
  }

  /** Selects an event by id from the list (the timeline's click). */
  async function selectId(eventId: number): Promise<void> {
    const i = events.value.findIndex((e) => e.id === eventId);
    if (i >= 0) await select(i);
    else {
      // Not in the filtered list: show it anyway.
      event.value = await api.getEvent({ eventId });
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
