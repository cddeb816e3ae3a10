/**
 * The report's figures (report.ts: HTML and the PDF printed from it): one metric's curves as a
 * standalone SVG with a title, axis titles, ticks on nice values (shared/chartRange) and whole
 * steps, gridlines, the legend beside the plot (never over the curves), colours from
 * shared/palette, each run's raw values faint under its EMA (evaluations raw, with markers), and
 * runs that differ only in seed drawn as one mean line in a mean ± std band over the seeds.
 * Evaluation rates are drawn in percent. Pure string building, browser-safe; no user text enters
 * unescaped.
 * Not here: which metrics a report draws, or reading them (report.ts, labService.ts).
 * Tests: test/shared/reportChart.test.ts (structure, bands, percent), test/e2e/charts.test.ts
 * (the report rendered in Chromium, screenshot looked at).
 */
import { configKeyWithoutSeed, emaSmooth, mean, sampleStd } from './analysis';
import { niceStep, niceYRange, tickLabel } from './chartRange';
import { REPORT_PALETTE } from './palette';

/** One line of a figure: `line` drawn in full colour, `raw` (optional) faint under it, `band` shaded behind. */
export interface FigureSeries {
  name: string;
  line: readonly [number, number | null][];
  raw?: readonly [number, number | null][];
  band?: readonly { x: number; lo: number; hi: number }[];
  /** Points get markers (few points: evaluations). */
  markers?: boolean;
}

export interface FigureInput {
  title: string;
  yTitle: string;
  xTitle: string;
  series: readonly FigureSeries[];
  /** Values are fractions shown as percent (×100, "%" in the axis title). */
  percent?: boolean;
  width?: number;
  height?: number;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const FONT = 'font-family="Helvetica, Arial, sans-serif"';
/** Legend width (px) and the longest name shown in it (longer ones end in an ellipsis; the full name is the entry's tooltip). */
const LEGEND_W = 150;
const LEGEND_CHARS = 22;
const GRID = '#e6e9ef';
const AXIS = '#8a93a3';
const TEXT = '#1d2330';

const ellipsis = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The figure as SVG (width x height px, scalable: it has a viewBox). */
export function figureSvg(f: FigureInput): string {
  const width = f.width ?? 520;
  const height = f.height ?? 230;
  const legend = f.series.length > 1 || f.series.some((s) => s.band);
  const pad = { l: 56, r: legend ? LEGEND_W + 12 : 14, t: 26, b: 40 };
  const k = f.percent ? 100 : 1;
  const scaled = (pts: readonly [number, number | null][] | undefined) =>
    (pts ?? []).map(([x, y]) => [x, y === null || !Number.isFinite(y) ? null : y * k] as [number, number | null]);
  const series = f.series.map((s) => ({
    ...s,
    line: scaled(s.line),
    raw: s.raw ? scaled(s.raw) : undefined,
    band: s.band?.map((b) => ({ x: b.x, lo: b.lo * k, hi: b.hi * k })),
  }));
  const ys: number[] = [];
  const xs: number[] = [];
  for (const s of series) {
    for (const [x, y] of [...s.line, ...(s.raw ?? [])]) {
      xs.push(x);
      if (y !== null) ys.push(y);
    }
    for (const b of s.band ?? []) ys.push(b.lo, b.hi);
  }
  const title = `<text x="${pad.l}" y="16" font-size="13" font-weight="600" ${FONT} fill="${TEXT}">${esc(f.title)}</text>`;
  const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(f.title)}"><rect width="100%" height="100%" fill="#fff"/>${title}`;
  if (!ys.length) return `${head}<text x="${width / 2}" y="${height / 2}" font-size="11" text-anchor="middle" ${FONT} fill="#888">no data</text></svg>`;

  const y = niceYRange(Math.min(...ys), Math.max(...ys));
  let x0 = Math.min(...xs);
  let x1 = Math.max(...xs);
  if (x1 === x0) [x0, x1] = [x0 - 0.5, x1 + 0.5];
  const pw = width - pad.l - pad.r;
  const ph = height - pad.t - pad.b;
  const sx = (x: number) => pad.l + ((x - x0) / (x1 - x0)) * pw;
  const sy = (v: number) => pad.t + ph - ((v - y.min) / (y.max - y.min)) * ph;
  const n = (v: number) => v.toFixed(1);

  // Ticks and gridlines: y on the range's nice ticks; x on whole steps, 1-2-5 spaced.
  const parts: string[] = [];
  for (let i = 0, v = y.min; v <= y.max + y.interval * 1e-6; i++, v = Number((y.min + i * y.interval).toFixed(y.digits + 2))) {
    parts.push(`<line x1="${pad.l}" x2="${pad.l + pw}" y1="${n(sy(v))}" y2="${n(sy(v))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${pad.l - 5}" y="${n(sy(v) + 3.5)}" font-size="10" text-anchor="end" ${FONT} fill="${TEXT}">${tickLabel(v, y)}</text>`);
  }
  const xStep = Math.max(1, niceStep((x1 - x0) / 6));
  for (let v = Math.ceil(x0 / xStep) * xStep; v <= x1; v += xStep) {
    parts.push(`<line x1="${n(sx(v))}" x2="${n(sx(v))}" y1="${pad.t}" y2="${pad.t + ph}" stroke="${GRID}"/>`);
    parts.push(`<text x="${n(sx(v))}" y="${pad.t + ph + 13}" font-size="10" text-anchor="middle" ${FONT} fill="${TEXT}">${v.toLocaleString('en-US')}</text>`);
  }
  parts.push(`<rect x="${pad.l}" y="${pad.t}" width="${pw}" height="${ph}" fill="none" stroke="${AXIS}"/>`);
  parts.push(`<text x="${pad.l + pw / 2}" y="${height - 6}" font-size="11" text-anchor="middle" ${FONT} fill="${TEXT}">${esc(f.xTitle)}</text>`);
  const yTitle = `${f.yTitle}${f.percent ? ' (%)' : ''}`;
  parts.push(`<text transform="translate(13 ${pad.t + ph / 2}) rotate(-90)" font-size="11" text-anchor="middle" ${FONT} fill="${TEXT}">${esc(yTitle)}</text>`);

  const path = (pts: readonly [number, number | null][]) => {
    let d = '';
    let pen = false;
    for (const [x, v] of pts) {
      if (v === null) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${n(sx(x))},${n(sy(v))}`;
      pen = true;
    }
    return d;
  };
  const clip = `clip-${Math.abs(hash(f.title + f.series.map((s) => s.name).join()))}`;
  parts.push(`<defs><clipPath id="${clip}"><rect x="${pad.l}" y="${pad.t}" width="${pw}" height="${ph}"/></clipPath></defs><g clip-path="url(#${clip})">`);
  series.forEach((s, i) => {
    const color = REPORT_PALETTE[i % REPORT_PALETTE.length];
    if (s.band?.length) {
      const top = s.band.map((b) => `${n(sx(b.x))},${n(sy(b.hi))}`);
      const bottom = [...s.band].reverse().map((b) => `${n(sx(b.x))},${n(sy(b.lo))}`);
      parts.push(`<polygon class="band" points="${[...top, ...bottom].join(' ')}" fill="${color}" fill-opacity="0.18" stroke="none"/>`);
    }
    if (s.raw) parts.push(`<path class="raw" d="${path(s.raw)}" fill="none" stroke="${color}" stroke-opacity="0.3" stroke-width="1"/>`);
    parts.push(`<path class="line" d="${path(s.line)}" fill="none" stroke="${color}" stroke-width="1.8"><title>${esc(s.name)}</title></path>`);
    if (s.markers) for (const [x, v] of s.line) if (v !== null) parts.push(`<circle cx="${n(sx(x))}" cy="${n(sy(v))}" r="2.4" fill="${color}"/>`);
  });
  parts.push('</g>');

  if (legend) {
    const lx = width - LEGEND_W;
    series.forEach((s, i) => {
      const color = REPORT_PALETTE[i % REPORT_PALETTE.length];
      const ly = pad.t + 8 + i * 16;
      const swatch = s.band ? `<rect x="${lx}" y="${ly - 6}" width="16" height="10" fill="${color}" fill-opacity="0.18"/>` : '';
      parts.push(
        `<g class="legend-entry">${swatch}<line x1="${lx}" x2="${lx + 16}" y1="${ly - 1}" y2="${ly - 1}" stroke="${color}" stroke-width="2"/>` +
          `<text x="${lx + 21}" y="${ly + 3}" font-size="10" ${FONT} fill="${TEXT}"><title>${esc(s.name)}</title>${esc(ellipsis(s.name, LEGEND_CHARS))}</text></g>`,
      );
    });
    const notes = [series.some((s) => s.raw) ? 'faint: raw; bold: EMA' : '', series.some((s) => s.band) ? 'band: mean ± std over seeds' : ''].filter(Boolean);
    notes.forEach((t, j) => parts.push(`<text x="${lx}" y="${pad.t + 16 + series.length * 16 + j * 12}" font-size="9" ${FONT} fill="#667">${t}</text>`));
  }
  return `${head}${parts.join('')}</svg>`;
}

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** A run's points of one metric, with what grouping by seed needs. */
export interface FigureRun {
  id: number;
  name: string;
  config: unknown;
  points: readonly { step: number; value: number | null }[];
}

/** y of a polyline at x (linear between neighbours; null outside it or across a gap). */
export function valueAt(pts: readonly [number, number | null][], x: number): number | null {
  let lo = 0;
  let hi = pts.length - 1;
  if (hi < 0 || x < pts[0][0] || x > pts[hi][0]) return null;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (pts[mid][0] <= x) lo = mid;
    else hi = mid;
  }
  const [xa, ya] = pts[lo];
  const [xb, yb] = pts[hi];
  if (ya === null || yb === null) return x === xa ? ya : x === xb ? yb : null;
  return xb === xa ? ya : ya + ((yb - ya) * (x - xa)) / (xb - xa);
}

/**
 * The figure's series for runs of one metric: runs whose configs differ only in seed form one
 * series (mean of their curves, EMA-smoothed unless `smoothing` is 0, at the first run's steps,
 * in a band of ± the sample std over the seeds, named "<name without -sN> (n seeds)"); a run
 * alone ("<id> <name>") is its EMA over its faint raw values (raw alone, with markers, when
 * `smoothing` is 0).
 */
export function figureSeries(runs: readonly FigureRun[], smoothing: number): FigureSeries[] {
  const labelOf = (r: FigureRun) => `${r.id} ${r.name}`;
  const groups = new Map<string, FigureRun[]>();
  for (const r of runs) {
    if (!r.points.length) continue;
    const key = configKeyWithoutSeed(r.config);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const curve = (r: FigureRun): [number, number | null][] => {
    const ys =
      smoothing > 0
        ? emaSmooth(
            r.points.map((p) => p.value),
            smoothing,
          )
        : r.points.map((p) => p.value);
    return r.points.map((p, i) => [p.step, ys[i] !== null && Number.isFinite(ys[i]) ? ys[i] : null]);
  };
  const raw = (r: FigureRun): [number, number | null][] => r.points.map((p) => [p.step, p.value !== null && Number.isFinite(p.value) ? p.value : null]);
  const out: FigureSeries[] = [];
  for (const members of groups.values()) {
    if (members.length === 1) {
      const r = members[0];
      out.push(smoothing > 0 ? { name: labelOf(r), line: curve(r), raw: raw(r) } : { name: labelOf(r), line: raw(r), markers: r.points.length <= 60 });
      continue;
    }
    const curves = members.map(curve);
    const line: [number, number | null][] = [];
    const band: { x: number; lo: number; hi: number }[] = [];
    for (const [x] of curves[0]) {
      const vals = curves.map((c) => valueAt(c, x)).filter((v): v is number => v !== null);
      if (vals.length < 2) {
        line.push([x, null]);
        continue;
      }
      const m = mean(vals);
      const sd = sampleStd(vals);
      line.push([x, m]);
      band.push({ x, lo: m - sd, hi: m + sd });
    }
    out.push({ name: `${members[0].name.replace(/-s\d+$/, '')} (${members.length} seeds)`, line, band, markers: smoothing === 0 && line.length <= 60 });
  }
  return out;
}
