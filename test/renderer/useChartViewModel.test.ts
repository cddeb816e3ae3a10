// The chart controls' edits of the view (src/renderer/src/composables/useChartViewModel.ts, used
// by components/ChartControls.vue): each writes a new ChartView into the v-model and never mutates
// the view it was given (the views passed in are frozen: a mutation would throw), and through a
// page's reactive view wired as the views wire it (Object.assign on update:modelValue) each edit
// reaches the view that useChartView keeps in the URL.
import { computed, effectScope, reactive, ref, watch } from 'vue';
import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, viewToQuery, type ChartView } from '../../src/shared/chartView';
import { useChartViewModel } from '../../src/renderer/src/composables/useChartViewModel';

const frozen = (v: ChartView): ChartView => Object.freeze({ ...v, panels: Object.freeze([...v.panels]) as string[] });

function edit(initial: ChartView) {
  const model = ref<ChartView>(frozen(initial));
  const scope = effectScope();
  const m = scope.run(() => useChartViewModel(model))!;
  return { model, m, close: () => scope.stop() };
}

describe('useChartViewModel: each edit is a new view', () => {
  it('smoothing, x axis and y scale write a new view with that field changed and the rest kept', () => {
    const start = { smoothing: 0.6, xAxis: 'step', yScale: 'linear', panels: ['a/b'] } satisfies ChartView;
    const { model, m, close } = edit(start);
    const given = model.value;
    m.smoothing.value = 0.85;
    expect(model.value).not.toBe(given);
    expect(given).toEqual(start); // the given view is untouched
    expect(model.value).toEqual({ ...start, smoothing: 0.85 });
    model.value = frozen(model.value);
    m.xAxis.value = 'time';
    expect(model.value).toEqual({ ...start, smoothing: 0.85, xAxis: 'time' });
    model.value = frozen(model.value);
    m.yScale.value = 'log';
    expect(model.value).toEqual({ smoothing: 0.85, xAxis: 'time', yScale: 'log', panels: ['a/b'] });
    close();
  });

  it('reads the fields of whatever view the model holds now', () => {
    const { model, m, close } = edit(DEFAULT_VIEW);
    expect([m.smoothing.value, m.xAxis.value, m.yScale.value]).toEqual([0.6, 'step', 'linear']);
    model.value = frozen({ smoothing: 0.2, xAxis: 'time', yScale: 'log', panels: [] });
    expect([m.smoothing.value, m.xAxis.value, m.yScale.value]).toEqual([0.2, 'time', 'log']);
    close();
  });

  it('adds a panel at the end once, and removes only the panel named', () => {
    const { model, m, close } = edit({ ...DEFAULT_VIEW, panels: ['x/1'] });
    m.addPanel('x/2');
    expect(model.value.panels).toEqual(['x/1', 'x/2']);
    model.value = frozen(model.value);
    const before = model.value;
    m.addPanel('x/1'); // already added: no new view at all
    expect(model.value).toBe(before);
    m.addPanel('x/3');
    model.value = frozen(model.value);
    m.removePanel('x/2');
    expect(model.value.panels).toEqual(['x/1', 'x/3']);
    expect(before.panels).toEqual(['x/1', 'x/2']);
    close();
  });
});

describe('useChartViewModel: through a page view wired as the views wire it', () => {
  it('each edit lands in the reactive view, whose watcher (the URL and remembered view) sees it', () => {
    const page = reactive<ChartView>({ ...DEFAULT_VIEW, panels: [] });
    // CompareView / RunDashboard: :model-value="view" @update:model-value="(v) => Object.assign(view, v)"
    const model = computed<ChartView>({ get: () => page, set: (v) => Object.assign(page, v) });
    const scope = effectScope();
    const queries: Record<string, string>[] = [];
    const m = scope.run(() => {
      watch(page, () => queries.push(viewToQuery(page)), { deep: true, flush: 'sync' });
      return useChartViewModel(model);
    })!;
    m.smoothing.value = 0.85;
    m.xAxis.value = 'time';
    m.addPanel('time/phase_42');
    m.addPanel('clip/frac_high');
    m.removePanel('time/phase_42');
    expect(queries).toEqual([
      { smooth: '0.85' },
      { smooth: '0.85', x: 'time' },
      { smooth: '0.85', x: 'time', panels: 'time/phase_42' },
      { smooth: '0.85', x: 'time', panels: 'time/phase_42,clip/frac_high' },
      { smooth: '0.85', x: 'time', panels: 'clip/frac_high' },
    ]);
    expect(m.smoothing.value).toBe(0.85); // the controls show the page's view
    scope.stop();
  });
});
