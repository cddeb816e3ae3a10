/**
 * The system's colour scheme (prefers-color-scheme), as one shared reactive value: App.vue's CSS
 * follows the same media query, and the curve panels redraw in the matching chart colours
 * (chartOption THEMES) when it changes. The listener is added once for the page.
 */
import { readonly, ref, type Ref } from 'vue';
import type { ChartTheme } from '../charts/chartOption';

const query = typeof window !== 'undefined' && window.matchMedia ? window.matchMedia('(prefers-color-scheme: light)') : null;
const scheme = ref<ChartTheme>(query?.matches ? 'light' : 'dark');
query?.addEventListener('change', (e) => (scheme.value = e.matches ? 'light' : 'dark'));

export function useColorScheme(): Readonly<Ref<ChartTheme>> {
  return readonly(scheme);
}
