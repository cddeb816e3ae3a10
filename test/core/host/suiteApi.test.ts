/**
 * The suite methods of the lab API (LabService, as both transports call it): create a suite from
 * presets and seeds, its runs queued behind the engine limit, its progress and tables, and its
 * exports (the tables leading the HTML and Markdown reports, the tables as CSV). Engines are
 * fakes that finish when told (the queue itself: engineQueue.test.ts).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabService } from '../../../src/core/host/labService';
import type { EngineLaunchRequest } from '../../../src/core/host/launcher';
import { FakeEngine } from './fakeEngine';
import type { LabApiError } from '../../../src/shared/api';

class FakeLauncher {
  readonly engines: FakeEngine[] = [];
  service!: LabService;
  launch(request: EngineLaunchRequest): FakeEngine {
    const e = new FakeEngine(request, this.service);
    this.engines.push(e);
    return e;
  }
}

const services: LabService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

function lab() {
  const launcher = new FakeLauncher();
  const service = new LabService({ dbPath: join(mkdtempSync(join(tmpdir(), 'srpo-suite-api-')), 'lab.db'), launcher, maxEngines: 1 });
  launcher.service = service;
  services.push(service);
  return { launcher, service };
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const spec = { name: 'cmp', seeds: [1, 2], rows: [{ preset: 'math-shared-grpo' }, { preset: 'math-drmas' }], baseline: 'math-shared-grpo' };

describe('suite API', () => {
  it('creates a suite, queues its runs behind the engine limit and shows its progress', async () => {
    const { launcher, service } = lab();
    const { suiteId } = await service.call('createSuite', { spec, start: true });
    expect(launcher.engines).toHaveLength(1);
    let d = await service.call('getSuite', { suiteId });
    expect(d.entries.map((e) => [e.label, e.seed, e.status])).toEqual([
      ['math-shared-grpo', 1, 'running'],
      ['math-drmas', 1, 'queued'],
      ['math-shared-grpo', 2, 'queued'],
      ['math-drmas', 2, 'queued'],
    ]);
    for (let i = 0; i < 4; i++) {
      launcher.engines[i].complete();
      await tick();
    }
    d = await service.call('getSuite', { suiteId, baseline: 'math-drmas' });
    expect(d.counts).toEqual({ completed: 4 });
    expect(d.table.baseline).toBe('math-drmas');
    expect((await service.call('listSuites', {})).map((s) => [s.id, s.name, s.total])).toEqual([[suiteId, 'cmp', 4]]);
    // Nothing left to queue.
    expect(await service.call('startSuite', { suiteId })).toEqual({ queued: 0 });
  });

  it('exports the suite: tables first in HTML and Markdown, the tables as CSV', async () => {
    const { launcher, service } = lab();
    const { suiteId } = await service.call('createSuite', { spec, start: true });
    for (let i = 0; i < 4; i++) {
      launcher.engines[i].complete();
      await tick();
    }
    const md = await service.call('exportReport', { suiteId, format: 'markdown' });
    expect(md.filename).toBe(`srpo-suite-${suiteId}.md`);
    expect(md.content).toContain('## Suite 1 "cmp": 2 rows x 2 seeds \\(4 of 4 runs completed\\)'); // Markdown-escaped
    expect(md.content.indexOf('### Quality')).toBeLessThan(md.content.indexOf('## Runs'));
    const html = await service.call('exportReport', { suiteId, format: 'html' });
    expect(html.content).toContain('Training dynamics');
    const csv = await service.call('exportReport', { suiteId, format: 'csv-table' });
    expect(csv.content.split('\n')[0]).toMatch(/^row,seeds,n,.*diff_avg_lo95/);
    expect(csv.content.trim().split('\n')).toHaveLength(3);
  });

  it('refuses a bad spec naming the problem, and an export of both runs and a suite', async () => {
    const { service } = lab();
    const bad = (await service
      .call('createSuite', { spec: { seeds: [1], rows: [{ preset: 'math-srpo', sets: { steps: -1 } }] } })
      .catch((e) => e)) as LabApiError;
    expect(bad.code).toBe('invalid_input');
    expect(bad.message).toMatch(/suite row "math-srpo steps=-1"/);
    const both = (await service.call('exportReport', { runIds: [1], suiteId: 1, format: 'html' }).catch((e) => e)) as LabApiError;
    expect(both.code).toBe('invalid_input');
    const missing = (await service.call('getSuite', { suiteId: 9 }).catch((e) => e)) as LabApiError;
    expect(missing.code).toBe('not_found');
  });
});
