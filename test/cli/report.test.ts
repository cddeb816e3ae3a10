/**
 * `srpo-lab report` (issue 30, point 7): the Reports view's documents from the command line. A
 * run written into a fresh database (metrics over 6 steps, evaluations at 0 and 6), then its
 * Markdown, HTML, table CSV and PDF (where Chromium is installed) written by the CLI; the files
 * hold the run's own figures; refusals (no format, an unknown one, no --out, an existing file)
 * say what to do.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabStore } from '../../src/core/store';
import { CHROMIUM_PATH } from '../../src/server/pdf';
import { runCliCaptured } from './harness';

const cli = runCliCaptured;

const dir = mkdtempSync(join(tmpdir(), 'srpo-report-cli-'));
const db = join(dir, 'lab.db');
let runId = 0;

const evaluation = (avg: number) => ({
  benchmark: 'arith-chain',
  n: 4,
  queries: 40,
  avgAtN: avg,
  passAtN: avg + 0.2,
  tokensPerQuery: 30,
  callsPerQuery: 3,
  toolCallsPerQuery: 0,
  successesPerMTok: 1,
  latencyP50Ms: 10,
  latencyP95Ms: 20,
});

beforeAll(() => {
  const store = LabStore.open(db);
  runId = store.createRun({
    name: 'report-me-s1',
    preset: 'math-quick',
    config: { steps: 6, eval: { n: 4 } },
    seed: 1,
    workflow: 'math',
    algorithm: 'srpo',
    status: 'completed',
  });
  for (let step = 0; step <= 6; step++) {
    const metrics: Record<string, number> =
      step < 6 ? { 'reward/mean': 0.1 * step, 'loss/total': 1 - 0.1 * step, 'budget/team_tokens': 3000 * (step + 1) + 318 } : {};
    const ev = step === 0 ? 0.125 : step === 6 ? 0.4375 : undefined;
    if (ev !== undefined) Object.assign(metrics, { 'eval/macro/avg': ev, 'eval/arith-chain/avg': ev });
    store.writeStep(runId, {
      step,
      wallTime: 1_700_000_000_000 + step * 1000,
      metrics,
      episodes: [],
      tokens: false,
      evaluations: ev === undefined ? [] : [evaluation(ev)],
    });
  }
  store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('srpo-lab report', () => {
  it('writes the Markdown report with the run and its final evaluation', async () => {
    const file = join(dir, 'r.md');
    const r = await cli(['report', String(runId), '--format', 'md', '--out', file, '--db', db]);
    expect(r.err).toBe('');
    expect(r.out).toBe(`wrote the md report of run ${runId} to ${file}`);
    const md = readFileSync(file, 'utf8');
    expect(md).toContain('report-me-s1');
    expect(md).toContain('43.8'); // the final Avg@4 in percent
  });

  it('writes HTML with figures, and the table as CSV', async () => {
    const html = join(dir, 'r.html');
    expect((await cli(['report', String(runId), '--format', 'html', '--out', html, '--db', db])).err).toBe('');
    const text = readFileSync(html, 'utf8');
    expect(text).toMatch(/^<!doctype html>/i);
    expect(text).toContain('<svg');
    expect(text).toContain('Training reward (mean per episode)');
    const csv = join(dir, 'r.csv');
    expect((await cli(['report', String(runId), '--format', 'csv', '--out', csv, '--db', db])).err).toBe('');
    const lines = readFileSync(csv, 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines[1]).toContain('report-me');
  });

  it.skipIf(!existsSync(CHROMIUM_PATH))(
    'prints the PDF with headless Chromium',
    async () => {
      const pdf = join(dir, 'r.pdf');
      const r = await cli(['report', String(runId), '--format', 'pdf', '--out', pdf, '--db', db]);
      expect(r.err).toBe('');
      const bytes = readFileSync(pdf);
      expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(bytes.length).toBeGreaterThan(5000);
    },
    60_000,
  );

  it('refuses, saying what to do: no format, an unknown format, no --out, an existing file, a missing run', async () => {
    const out = join(dir, 'x.md');
    expect((await cli(['report', String(runId), '--out', out, '--db', db])).err).toMatch(/report needs --format \(html, md, markdown, pdf, csv/);
    expect((await cli(['report', String(runId), '--format', 'docx', '--out', out, '--db', db])).err).toMatch(
      /--format "docx" is not a format; valid: html, md/,
    );
    expect((await cli(['report', String(runId), '--format', 'md', '--db', db])).err).toMatch(/report needs --out FILE/);
    writeFileSync(out, 'mine\n');
    expect((await cli(['report', String(runId), '--format', 'md', '--out', out, '--db', db])).err).toMatch(/already exists; add --force/);
    expect(readFileSync(out, 'utf8')).toBe('mine\n');
    expect((await cli(['report', '99', '--format', 'md', '--out', join(dir, 'y.md'), '--db', db])).err).toMatch(/99/);
  });
});
