/**
 * Subscribes a component to the lab's pushes for as long as it is mounted (the disposer runs on
 * unmount), optionally only those of one run. Components never call client.subscribe directly.
 */
import { onScopeDispose } from 'vue';
import type { LabPush } from '../../../shared/api';
import { labClient } from '../api/client';

export function usePushes(listener: (push: LabPush) => void, runId?: () => number | null): void {
  const dispose = labClient().subscribe((p) => {
    const want = runId?.();
    if (want !== undefined && want !== null && 'runId' in p && p.runId !== want) return;
    listener(p);
  });
  onScopeDispose(dispose);
}
