/**
 * Window key bindings for a mounted component (removed on unmount), ignored while the user types
 * in a form field. Keys are matched exactly (`j`, `J`, `n`), so Shift is part of the key.
 */
import { onMounted, onUnmounted } from 'vue';

export function useKeyboard(bindings: Record<string, (e: KeyboardEvent) => void>): void {
  const onKey = (e: KeyboardEvent) => {
    const t = e.target as HTMLElement | null;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable)) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const fn = bindings[e.key];
    if (fn) {
      e.preventDefault();
      fn(e);
    }
  };
  onMounted(() => window.addEventListener('keydown', onKey));
  onUnmounted(() => window.removeEventListener('keydown', onKey));
}
