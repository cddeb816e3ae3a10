/**
 * The lab connection's state as a ref (api/client.ts: 'connected', 'lost', 'unauthorized'), for
 * the App's banner and the New run view's "valid"; the subscription ends with the component.
 * `retry` reconnects now and says whether the server answered. Tested by test/e2e/trace.test.ts
 * (the server stopped and started again under a user's eyes).
 */
import { onScopeDispose, ref, shallowRef } from 'vue';
import { connectionState, onConnection, retryConnection, type ConnectionState } from '../api/client';

export function useConnection() {
  const state = shallowRef<ConnectionState>(connectionState());
  const retrying = ref(false);
  onScopeDispose(onConnection((s) => (state.value = s)));
  async function retry(): Promise<boolean> {
    retrying.value = true;
    try {
      return await retryConnection();
    } finally {
      retrying.value = false;
    }
  }
  return { state, retrying, retry };
}
