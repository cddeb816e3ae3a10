/**
 * Colours of the trace viewer's tokens (TraceViewerMember, legend in TraceViewerEvent): a
 * diverging scale centred at 0 for per-token log-ratios log pi_cur - log pi_old (blue: the
 * current policy made the token more likely, red: less likely, neutral at 0, saturating at
 * +-TOKEN_LOG_RATIO_RANGE nats), and the sequential scale the viewer used before per-token
 * log-ratios were stored (behaviour log-prob, or the member's log-ratio). Pure functions.
 */

/** Token log-ratios beyond +-this many nats take the end colours (log 1.25 ~ 0.22: past a 0.2 clip). */
export const TOKEN_LOG_RATIO_RANGE = 0.25;
/** Behaviour log-prob range of the sequential scale, nats. */
export const LOGP_RANGE: readonly [number, number] = [-6, 0];

const NEG = [230, 72, 60];
const POS = [70, 140, 245];

/** Steps of the diverging scale on each side of 0 in its table (finer differences are invisible). */
const DIVERGING_STEPS = 250;
/** divergingColour's strings for t = k / DIVERGING_STEPS, k in -STEPS..STEPS (built on first use). */
let divergingTable: string[] | null = null;

function divergingAt(t: number): string {
  const [r, g, b] = t < 0 ? NEG : POS;
  const a = 0.08 + 0.62 * Math.abs(t);
  return `rgba(${r}, ${g}, ${b}, ${a.toFixed(3)})`;
}

/**
 * Diverging colour of a log-ratio: transparent-ish at 0, red below, blue above. Called once per
 * token on every trace step, so the colour comes from a table of 2 x DIVERGING_STEPS + 1 strings.
 */
export function divergingColour(v: number, range = TOKEN_LOG_RATIO_RANGE): string {
  const t = Math.max(-1, Math.min(1, v / range));
  if (!Number.isFinite(t)) return divergingAt(0);
  divergingTable ??= Array.from({ length: 2 * DIVERGING_STEPS + 1 }, (_, k) => divergingAt((k - DIVERGING_STEPS) / DIVERGING_STEPS));
  return divergingTable[Math.round((t + 1) * DIVERGING_STEPS)];
}

/** Sequential colour (red: low, blue: high) of v in [lo, hi]: the viewer's original scale. */
export function sequentialColour(v: number, lo: number, hi: number): string {
  const t = Math.min(1, Math.max(0, (v - lo) / (hi - lo || 1)));
  const r = Math.round(220 - 150 * t);
  const b = Math.round(70 + 160 * t);
  return `rgba(${r}, 90, ${b}, 0.55)`;
}

/** CSS gradient of the diverging scale from -range to +range, for the legend. */
export function divergingGradient(range = TOKEN_LOG_RATIO_RANGE): string {
  const stops = [-1, -0.5, 0, 0.5, 1].map((t) => `${divergingColour(t * range, range)} ${((t + 1) * 50).toFixed(0)}%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}
