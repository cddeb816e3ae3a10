// Build of the three Electron bundles (main, preload, renderer) by electron-vite.
// Dependencies stay external in main/preload (native better-sqlite3, optional tfjs-node-gpu).
// The main build has three entries: `index` (the Electron main process), `labWorker`
// (src/core/host/labWorker.ts, the LabService in a worker_threads Worker of the main process:
// out/main/labWorker.js) and `engine` (src/engine/main.ts, run by the desktop app as an Electron
// utility process: out/main/engine.js). All CommonJS like the main bundle; tsx is not available
// inside a packaged app. Code they share lands in out/main/chunks/.
// The renderer is built without Vue's Options API (every component is <script setup>): each
// component's mount otherwise ran the Options API's setup for options it does not have.
import { resolve } from 'node:path';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'electron-vite';

export default defineConfig({
  main: {
    build: {
      externalizeDeps: true,
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'src/main/index.ts'),
          labWorker: resolve(__dirname, 'src/core/host/labWorker.ts'),
          engine: resolve(__dirname, 'src/engine/main.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      externalizeDeps: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src/preload/index.ts') } },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src/renderer'),
    build: { rollupOptions: { input: { index: resolve(__dirname, 'src/renderer/index.html') } } },
    define: { __VUE_OPTIONS_API__: 'false' },
    plugins: [vue()],
  },
});
