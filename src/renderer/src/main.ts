// Renderer entry: mounts the Vue app with Pinia.
import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { pageChartWarmup } from './charts/chartWarmupPage';
import { warmRememberedViews } from './composables/useChartView';

createApp(App).use(createPinia()).mount('#app');
// The chart code warmed in the first idle moment (charts/chartWarmup.ts says why).
pageChartWarmup.schedule();
// The chart pages' remembered views read while idle (composables/useChartView says why).
requestIdleCallback(warmRememberedViews);
