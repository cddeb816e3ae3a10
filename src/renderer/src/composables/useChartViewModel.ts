/**
 * Edits of a chart workspace's view (shared/chartView ChartView) held in a v-model: each control
 * writes a new ChartView into the model and never mutates the one it was given, so the component
 * that owns the controls (components/ChartControls) leaves the view to its owner (the page's
 * useChartView, which keeps it in the URL and remembers it). Not here: where the view is kept or
 * how it is drawn. Tested by test/renderer/useChartViewModel.test.ts (a frozen view: any mutation
 * throws).
 */
import { computed, type Ref, type WritableComputedRef } from 'vue';
import type { ChartView } from '../../../shared/chartView';

export interface ChartViewModel {
  smoothing: WritableComputedRef<ChartView['smoothing']>;
  xAxis: WritableComputedRef<ChartView['xAxis']>;
  yScale: WritableComputedRef<ChartView['yScale']>;
  /** Adds a panel for `key` at the end; a key already added adds nothing. */
  addPanel(key: string): void;
  removePanel(key: string): void;
}

export function useChartViewModel(model: Ref<ChartView>): ChartViewModel {
  const set = (patch: Partial<ChartView>) => (model.value = { ...model.value, ...patch });
  const field = <K extends 'smoothing' | 'xAxis' | 'yScale'>(k: K) => computed<ChartView[K]>({ get: () => model.value[k], set: (v) => set({ [k]: v }) });
  return {
    smoothing: field('smoothing'),
    xAxis: field('xAxis'),
    yScale: field('yScale'),
    addPanel(key) {
      if (!model.value.panels.includes(key)) set({ panels: [...model.value.panels, key] });
    },
    removePanel(key) {
      set({ panels: model.value.panels.filter((k) => k !== key) });
    },
  };
}
