// Renderer entry: mounts the Vue app with Pinia.
import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { pageChartWarmup } from './charts/chartWarmupPage';

createApp(App).use(createPinia()).mount('#app');
// The chart code warmed in the first idle moment (charts/chartWarmup.ts says why).
pageChartWarmup.schedule();
