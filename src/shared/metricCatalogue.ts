/**
 * The metric catalogue: every key a training step, an evaluation or the engine writes, with its
 * readable title, unit, kind and the code that produces it. The dashboard, Compare, the reports
 * and the CLI take titles from here, and a step's metrics are merged through `StepMetrics`, which
 * refuses a key produced twice (two producers once wrote `reward/mean` with different meanings
 * and the later one silently won). Browser-safe: no Node imports.
 *
 * Decision (issue 29): `reward/mean` is the mean team reward per episode of the step's rollouts
 * (the episode's score, before penalties), `reward/std` its population std over those episodes.
 * The objective's view, the penalised event reward R_e averaged over the complete events that
 * the update trains on, is `reward/event_mean` with its sample std `reward/event_std`.
 *
 * Tests: test/core/train/metricKeys.test.ts (patterns and duplicates; a real step emits only
 * catalogued keys, and every key the screens and reports show by default exists in it).
 */

/** The code that writes a metric (one producer per key). */
export type MetricProducer =
  | 'rollout' // src/core/train/stepRecord.ts rolloutMetrics: per-episode and per-member figures of the rollouts
  | 'batch' // src/core/srpo/batchMetrics.ts: what the objective's batch holds before any ratio
  | 'objective' // src/core/srpo variants (surrogate.ts, objective.ts): ratios, clipping, KL, the policy loss
  | 'update' // src/core/train/update.ts: gradients and the mini-batch bookkeeping
  | 'budget' // src/core/train/budget.ts: cumulative rollout cost against the run's budgets
  | 'engine' // src/core/train/trainer.ts: time, memory and policy versions of the step
  | 'eval'; // src/core/eval/metrics.ts summaryToMetrics: one evaluation

/**
 * How a value reads: `mean` a per-step average; `fraction` a share in [0, 1] (axes stop at 0 and
 * 1); `count` a per-step count; `cumulative` a running total (never smoothed: its last point is
 * the value); `seconds`/`bytes` as named.
 */
export type MetricKind = 'mean' | 'fraction' | 'count' | 'cumulative' | 'seconds' | 'bytes';

export interface MetricInfo {
  /** The key, or a pattern whose `{name}` parts stand for one path segment (`eval/{benchmark}/avg`). */
  pattern: string;
  /** A readable title for charts and tables. */
  title: string;
  /** The unit, '' when the value is a plain number. */
  unit: string;
  kind: MetricKind;
  producer: MetricProducer;
  /** One sentence: what is measured. */
  description: string;
}

const m = (pattern: string, title: string, kind: MetricKind, producer: MetricProducer, description: string, unit = ''): MetricInfo => ({
  pattern,
  title,
  unit,
  kind,
  producer,
  description,
});

export const METRICS: readonly MetricInfo[] = [
  // rollout
  m('reward/mean', 'Training reward (mean per episode)', 'mean', 'rollout', "Mean team reward (the episode's score) over the step's rollout episodes."),
  m('reward/std', 'Training reward std (per episode)', 'mean', 'rollout', 'Population standard deviation of the team reward over the episodes.'),
  m('train/accuracy', 'Training accuracy', 'fraction', 'rollout', 'Share of rollout episodes whose final answer was graded correct.'),
  m('cost/tokens', 'Tokens per episode', 'mean', 'rollout', 'Generated tokens per rollout episode, all agents together.', 'tokens'),
  m('cost/calls', 'Calls per episode', 'mean', 'rollout', 'Policy calls per rollout episode (the sum of K over its events).', 'calls'),
  m('cost/tool_calls', 'Tool calls per episode', 'mean', 'rollout', 'Tool calls (retrievals) per rollout episode.', 'calls'),
  m('episode/events', 'Events per episode', 'mean', 'rollout', 'Events (active sets) per rollout episode.', 'events'),
  m(
    'logp/behaviour_mismatch_max',
    'Behaviour log-prob mismatch (max)',
    'mean',
    'rollout',
    'Largest gap between the sampler log-prob and the old policy re-scored on the same tokens.',
    'nats',
  ),
  m('response/length_mean', 'Response length (mean)', 'mean', 'rollout', 'Generated tokens per member output.', 'tokens'),
  m('response/length_max', 'Response length (max)', 'mean', 'rollout', 'Longest member output of the step.', 'tokens'),
  m('response/truncated_frac', 'Truncated outputs', 'fraction', 'rollout', 'Share of member outputs cut by the token limit.'),
  m('entropy', 'Policy entropy', 'mean', 'rollout', 'Mean per-token entropy of the sampling distribution over generated tokens.', 'nats'),
  m('role/{role}/reward_mean', 'Reward of {role} events', 'mean', 'rollout', "Mean event reward of the role's events."),
  m(
    'external/failed_episodes',
    'External agents: failed episodes',
    'count',
    'rollout',
    'Episodes of the batch dropped: no reward, the program failed, crashed or timed out.',
    'episodes',
  ),
  m('external/requests', 'External agents: endpoint requests', 'count', 'rollout', 'Completion requests the program sent in the batch.', 'requests'),
  m(
    'external/request_latency_ms',
    'Endpoint request latency (mean)',
    'mean',
    'rollout',
    'Mean time from a request to its answer, queueing and batching included.',
    'ms',
  ),
  m('external/request_latency_p95_ms', 'Endpoint request latency (p95)', 'mean', 'rollout', '95th percentile of the request latency.', 'ms'),
  m('external/sampler_calls', 'External agents: sampler calls', 'count', 'rollout', 'Batched sampler calls the endpoint made for the batch.', 'calls'),
  m(
    'external/rows_per_sampler_call',
    'External agents: rows per sampler call',
    'mean',
    'rollout',
    'Requests answered by one batched sampler call, on average.',
    'rows',
  ),
  m(
    'external/max_concurrent',
    'External agents: most requests at once',
    'count',
    'rollout',
    "Most requests in flight at one time (bounded by the workflow's concurrency).",
    'requests',
  ),
  m('role/{role}/valid_rate', 'Valid outputs of {role}', 'fraction', 'rollout', "Share of the role's outputs the workflow could parse."),
  // batch
  m('events/complete', 'Complete events', 'count', 'batch', 'Events with all K members, trained on this step.', 'events'),
  m('events/dropped', 'Dropped events', 'count', 'batch', 'Events left out of the update (incomplete sets).', 'events'),
  m('groups/count', 'Groups', 'count', 'batch', 'Comparison groups of the advantage grouping.', 'groups'),
  m('groups/singleton', 'Singleton groups', 'count', 'batch', 'Groups of one event (no relative signal).', 'groups'),
  m('groups/zero_std_frac', 'Groups without signal', 'fraction', 'batch', 'Among groups of two or more, the share whose rewards are all equal (advantage 0).'),
  m('set/size_mean', 'Set size (members per event)', 'mean', 'batch', 'Mean K over the complete events.', 'members'),
  m('set/size_max', 'Set size (max)', 'mean', 'batch', 'Largest K of the step.', 'members'),
  m('set/size_hist/{k}', 'Events with K = {k}', 'count', 'batch', 'Complete events of set size K.', 'events'),
  m('reward/event_mean', 'Event reward (mean, penalised)', 'mean', 'batch', 'Mean of R_e (team reward minus penalties) over the complete events.'),
  m('reward/event_std', 'Event reward std (penalised)', 'mean', 'batch', 'Sample standard deviation of R_e over the complete events.'),
  m('adv/mean', 'Advantage (mean)', 'mean', 'batch', 'Mean group-relative advantage over events (event grouping) or members.'),
  m('adv/std', 'Advantage std', 'mean', 'batch', 'Sample standard deviation of the advantages.'),
  m('adv/abs_max', 'Advantage |max|', 'mean', 'batch', 'Largest absolute advantage.'),
  m(
    'response/trained_length_mean',
    'Trained response length (mean)',
    'mean',
    'batch',
    'Tokens per member output among the complete events the update trains on.',
    'tokens',
  ),
  m('response/trained_length_max', 'Trained response length (max)', 'mean', 'batch', 'Longest member output among the complete events.', 'tokens'),
  // objective
  m('loss/policy', 'Policy loss', 'mean', 'objective', "The objective's clipped surrogate loss."),
  m('ratio/mean', 'Importance ratio (mean)', 'mean', 'objective', 'Mean ratio (set ratio for SRPO) over the training units.'),
  m('ratio/min', 'Importance ratio (min)', 'mean', 'objective', 'Smallest ratio of the step.'),
  m('ratio/max', 'Importance ratio (max)', 'mean', 'objective', 'Largest ratio of the step.'),
  m('ratio/log_abs_mean', 'Mean |log ratio|', 'mean', 'objective', 'Mean absolute log-ratio: how far the policy moved from the behaviour policy.'),
  m('ratio/clamped', 'Clamped log-ratios', 'count', 'objective', 'Training units whose log-ratio was held at the numeric clamp (±20 nats), per mini-batch.'),
  m('clip/frac', 'Clipped fraction', 'fraction', 'objective', 'Share of training units whose term was clipped.'),
  m('clip/frac_low', 'Clipped fraction (low side)', 'fraction', 'objective', 'Share clipped below 1 − ε (negative advantages).'),
  m('clip/frac_high', 'Clipped fraction (high side)', 'fraction', 'objective', 'Share clipped above 1 + ε (positive advantages).'),
  m('clip/frac_dual', 'Dual-clipped fraction', 'fraction', 'objective', 'Share held by the dual clip.'),
  m('kl/approx', 'Approximate KL to the behaviour policy', 'mean', 'objective', 'k3 estimate of KL(old ‖ current) over trained tokens.', 'nats'),
  m('kl/ref', 'KL to the reference policy', 'mean', 'objective', 'KL penalty term against the frozen reference.', 'nats'),
  // update
  m('loss/total', 'Loss', 'mean', 'update', 'The loss the gradient is taken of (policy loss plus any KL term).'),
  m('grad/norm', 'Gradient norm (before clipping)', 'mean', 'update', 'Global L2 norm of the gradient before clipping.'),
  m('grad/clip_scale', 'Gradient clip scale', 'mean', 'update', 'Factor the gradient was scaled by (1: not clipped).'),
  m('update/applied', 'Mini-batches applied', 'count', 'update', 'Optimizer steps applied this step.', 'updates'),
  m('update/skipped', 'Mini-batches skipped', 'count', 'update', 'Mini-batches skipped (empty, or a non-finite gradient).', 'updates'),
  m(
    'update/passes',
    'Forward/backward passes',
    'count',
    'update',
    'Passes over the mini-batches this step: more than update/applied + update/skipped when update.microBatchRows or the tape budget split them into micro-batches.',
    'passes',
  ),
  // budget
  m('budget/team_tokens', 'Team tokens (cumulative)', 'cumulative', 'budget', 'Tokens generated by all agents in rollouts so far.', 'tokens'),
  m('budget/tool_calls', 'Tool calls (cumulative)', 'cumulative', 'budget', 'Tool calls made in rollouts so far.', 'calls'),
  // engine
  m('time/step', 'Step time', 'seconds', 'engine', 'Wall time of the whole step.', 's'),
  m(
    'time/{phase}',
    'Time: {phase}',
    'seconds',
    'engine',
    'Wall time of one phase of the step (rollout, sampler, old_logp, update, eval, checkpoint, ...).',
    's',
  ),
  m('memory/tensors', 'Live tensors', 'count', 'engine', 'Tensors alive after the step (a leak grows it).', 'tensors'),
  m('memory/device_bytes', 'Backend memory', 'bytes', 'engine', "Bytes the native backend's tensors hold.", 'B'),
  m('memory/gpu_bytes', 'GPU memory (tensors)', 'bytes', 'engine', 'Bytes of tensors on the GPU.', 'B'),
  m('memory/gpu_allocated_bytes', 'GPU memory (allocated)', 'bytes', 'engine', 'Bytes the GPU allocator holds.', 'B'),
  m('policy/{policy}/version', 'Version of policy {policy}', 'count', 'engine', 'Updates applied to the policy so far.', 'updates'),
  // eval
  m('eval/macro/avg', 'Validation Avg@n (macro over benchmarks)', 'fraction', 'eval', 'Mean over benchmarks of Avg@n.'),
  m('eval/macro/pass', 'Validation Pass@n (macro over benchmarks)', 'fraction', 'eval', 'Mean over benchmarks of Pass@n.'),
  m('eval/{benchmark}/avg', '{benchmark} Avg@n', 'fraction', 'eval', 'Mean correctness of the n samples per query.'),
  m('eval/{benchmark}/pass', '{benchmark} Pass@n', 'fraction', 'eval', 'Share of queries with at least one correct sample of n.'),
  m('eval/{benchmark}/tokens_per_query', '{benchmark} tokens per query', 'mean', 'eval', 'Generated tokens per evaluated query, all agents.', 'tokens'),
  m('eval/{benchmark}/calls_per_query', '{benchmark} calls per query', 'mean', 'eval', 'Policy calls per evaluated query.', 'calls'),
  m('eval/{benchmark}/tool_calls_per_query', '{benchmark} tool calls per query', 'mean', 'eval', 'Tool calls per evaluated query.', 'calls'),
  m('eval/{benchmark}/u_tok', '{benchmark} successes per million tokens', 'mean', 'eval', 'Correct answers per million generated tokens.'),
  m('eval/{benchmark}/latency_p50_ms', '{benchmark} latency p50', 'mean', 'eval', 'Median wall time of an evaluated query.', 'ms'),
  m('eval/{benchmark}/latency_p95_ms', '{benchmark} latency p95', 'mean', 'eval', '95th percentile wall time of an evaluated query.', 'ms'),
];

interface Compiled {
  info: MetricInfo;
  re: RegExp;
  names: string[];
}

/** Exact keys before patterns, so `eval/macro/avg` is not read as benchmark "macro". */
const COMPILED: Compiled[] = METRICS.map((info) => {
  const names: string[] = [];
  const source = info.pattern
    .split(/(\{[a-z]+\})/)
    .map((part) => {
      const name = /^\{([a-z]+)\}$/.exec(part)?.[1];
      if (name) {
        names.push(name);
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return { info, re: new RegExp(`^${source}$`), names };
}).sort((a, b) => a.names.length - b.names.length);

/** The catalogue's entry of a key, with the values of its `{name}` parts; undefined when not catalogued. */
export function lookupMetric(key: string): { info: MetricInfo; params: Record<string, string> } | undefined {
  for (const c of COMPILED) {
    const match = c.re.exec(key);
    if (match) return { info: c.info, params: Object.fromEntries(c.names.map((n, i) => [n, match[i + 1]])) };
  }
  return undefined;
}

/** The readable title of a key (the key itself when not catalogued); `{name}` parts filled in. */
export function metricTitle(key: string): string {
  const hit = lookupMetric(key);
  if (!hit) return key;
  return hit.info.title.replace(/\{([a-z]+)\}/g, (_, n: string) => hit.params[n] ?? n);
}

/** A value's kind (how axes and smoothing treat it); 'mean' when not catalogued. */
export function metricKind(key: string): MetricKind {
  return lookupMetric(key)?.info.kind ?? 'mean';
}

/**
 * A step's metrics gathered from its producers: `add` throws when a key was already produced
 * (by whom, and by whom again), so two parts of the code can never write one key with two
 * meanings. Keys outside the catalogue are refused too: a new metric is added to METRICS first.
 */
export class StepMetrics {
  readonly values: Record<string, number> = {};
  private readonly owner = new Map<string, string>();

  /** `producer`: who writes these metrics (several when a part relays another's, as the update relays the objective's). */
  add(producer: MetricProducer | readonly MetricProducer[], metrics: Readonly<Record<string, number>>): this {
    const producers: readonly MetricProducer[] = typeof producer === 'string' ? [producer] : producer;
    const who = producers.join('+');
    for (const [key, value] of Object.entries(metrics)) {
      const before = this.owner.get(key);
      if (before !== undefined) throw new Error(`metric "${key}" produced twice in one step: by ${before}, then by ${who}`);
      const hit = lookupMetric(key);
      if (!hit) throw new Error(`metric "${key}" (from ${who}) is not in the metric catalogue (src/shared/metricCatalogue.ts): add it there first`);
      if (!producers.includes(hit.info.producer)) throw new Error(`metric "${key}" came from ${who}, but the catalogue says ${hit.info.producer} produces it`);
      this.owner.set(key, who);
      this.values[key] = value;
    }
    return this;
  }
}

/**
 * The keys each surface shows by default, here so one test can check that a real step emits them
 * (test/core/train/metricKeys.test.ts). The dashboard adds a panel per benchmark
 * (`eval/{benchmark}/avg`, `/pass`) to DASHBOARD_PANELS.
 */
export const DASHBOARD_PANELS: readonly { title: string; keys: readonly string[] }[] = [
  { title: 'Training reward (mean per episode)', keys: ['reward/mean'] },
  { title: 'Gradient norm (before clipping)', keys: ['grad/norm'] },
  { title: 'Response length (mean)', keys: ['response/length_mean'] },
  { title: 'Set size (members per event)', keys: ['set/size_mean'] },
  { title: 'Clipped fraction (low, high)', keys: ['clip/frac_low', 'clip/frac_high'] },
  { title: 'Importance ratio (mean, min, max)', keys: ['ratio/mean', 'ratio/min', 'ratio/max'] },
  { title: 'Policy entropy', keys: ['entropy'] },
  { title: 'Tokens per episode', keys: ['cost/tokens'] },
  { title: 'Calls per episode (policy, tool)', keys: ['cost/calls', 'cost/tool_calls'] },
  { title: 'Loss', keys: ['loss/total'] },
];

/** Panels the dashboard adds for a run of the external workflow (an agent program behind the endpoint). */
export const EXTERNAL_PANELS: readonly { title: string; keys: readonly string[] }[] = [
  { title: 'External agents: failed episodes', keys: ['external/failed_episodes'] },
  { title: 'Endpoint request latency (mean, p95)', keys: ['external/request_latency_ms', 'external/request_latency_p95_ms'] },
];

/** Compare's default panels. */
export const COMPARE_KEYS: readonly string[] = [
  'reward/mean',
  'eval/macro/avg',
  'eval/macro/pass',
  'loss/total',
  'grad/norm',
  'clip/frac_high',
  'response/length_mean',
  'set/size_mean',
  'entropy',
  'cost/tokens',
];

/** `srpo-lab show`: the metrics listed first (when present) among the last step's. */
export const HEADLINE_KEYS: readonly string[] = [
  'reward/mean',
  'reward/std',
  'loss/total',
  'loss/policy',
  'clip/frac_low',
  'clip/frac_high',
  'ratio/mean',
  'kl/approx',
  'grad/norm',
  'groups/zero_std_frac',
  'eval/macro/avg',
  'eval/macro/pass',
  'time/step',
];
