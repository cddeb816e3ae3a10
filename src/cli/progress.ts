/**
 * What `srpo-lab train` / `resume` print while a run trains: on a terminal one progress line
 * redrawn in place (bar, step/total, reward, eval accuracy, s/step, ETA), otherwise one plain
 * log line per step. Pure formatting over the engine's messages; no I/O of its own beyond the
 * writer it is given. "step n/S" counts updates committed (src/shared/stepConvention.ts): the
 * message of step record s says n = s + 1; the final evaluation is "after S steps" (with
 * evaluation off, eval.every = 0, the last line says so instead of a table of dashes). Health
 * warnings (src/shared/runHealth.ts) over the step messages' metrics are printed once each, as
 * soon as they hold. Tests: test/cli/train.test.ts (plain lines), test/cli/progressView.test.ts.
 */
import type { EngineMessage } from '../core/host/messages';
import { corpusProgressBarText, corpusProgressFigures } from '../shared/corpusProgress';
import { runHealth, healthLine, type HealthCheckName, type HealthPoint } from '../shared/runHealth';
import { metricStepKind, stepOfRecord, updatesDone } from '../shared/stepConvention';
import { duration, fixed } from './lab';

export class ProgressView {
  private startedAt = 0;
  private stepsDone = 0;
  private lastEval: number | null = null;
  private lastReward: number | null = null;
  private drawn = false;
  /** The health keys' values by step (updates done), from the step messages. */
  private readonly health: Record<string, HealthPoint[]> = {};
  private readonly warned = new Set<HealthCheckName>();

  constructor(
    private readonly out: (line: string) => void,
    private readonly tty: { write(text: string): void; columns: number } | null,
  ) {}

  /** Prints a normal line (clearing the progress line first on a terminal). */
  line(text: string): void {
    this.clear();
    this.out(text);
  }

  handle(msg: EngineMessage): void {
    switch (msg.type) {
      case 'ready':
        this.startedAt = performance.now();
        this.line(
          `engine ready: backend ${msg.backend.name}` +
            (msg.startStep > 0 ? `, resuming at step ${msg.startStep + 1} (${msg.startStep} updates committed)` : '') +
            `, ${msg.totalSteps - msg.startStep} steps to go`,
        );
        return;
      case 'step': {
        this.stepsDone++;
        const m = msg.metrics;
        if (m['reward/mean'] !== undefined) this.lastReward = m['reward/mean'];
        if (m['eval/macro/avg'] !== undefined) this.lastEval = m['eval/macro/avg'];
        const remaining = msg.totalSteps - msg.step; // the final eval-only step counts as one
        const perStep = (performance.now() - this.startedAt) / 1000 / this.stepsDone;
        const eta = duration(perStep * Math.max(0, remaining));
        if (msg.final) {
          this.line(
            m['eval/macro/avg'] === undefined
              ? `done: ${msg.step} update${msg.step === 1 ? '' : 's'}; no final evaluation (evaluation off: eval.every = 0)`
              : `final eval (after ${msg.step} steps): macro avg ${fixed(m['eval/macro/avg'])}  pass ${fixed(m['eval/macro/pass'])}`,
          );
        } else if (this.tty) {
          this.draw(updatesDone(msg.step, msg.totalSteps), msg.totalSteps, perStep, eta);
        } else {
          const ev = m['eval/macro/avg'] !== undefined ? `  eval ${fixed(m['eval/macro/avg'])}` : '';
          this.out(
            `step ${updatesDone(msg.step, msg.totalSteps)}/${msg.totalSteps}  reward ${fixed(m['reward/mean'])}${ev}  loss ${fixed(m['loss/total'], 4)}  ` +
              `${fixed(msg.wallMs / 1000, 2)} s/step  ETA ${eta}${msg.checkpoint ? '  [checkpoint]' : ''}`,
          );
        }
        if (!msg.final) this.checkHealth(msg.step, m);
        return;
      }
      case 'status':
        if (msg.status === 'paused' || (msg.status === 'running' && this.stepsDone > 0)) this.line(`run ${msg.status}`);
        return;
      case 'log':
        this.line(`${msg.level === 'info' ? '' : `${msg.level}: `}${msg.line}`);
        return;
      case 'indexProgress':
        // On a terminal a bar over the corpus file while the index builds; elsewhere the engine's
        // log line every few seconds says the same.
        if (!this.tty) return;
        if (msg.done) return this.clear();
        this.bar(corpusProgressFigures(msg).fraction, ` ${corpusProgressBarText(msg)}`);
        return;
    }
  }

  /** Adds a training step's metrics to the health series and prints each warning the first time it holds. */
  private checkHealth(record: number, m: Record<string, number>): void {
    for (const [k, v] of Object.entries(m)) {
      if (k.startsWith('eval/') || metricStepKind(k) !== 'train') continue;
      (this.health[k] ??= []).push({ step: stepOfRecord(record, 'train'), value: Number.isFinite(v) ? v : null });
    }
    for (const w of runHealth(this.health, { ended: false })) {
      if (this.warned.has(w.check)) continue;
      this.warned.add(w.check);
      this.line(healthLine(w));
    }
  }

  finish(): void {
    this.clear();
  }

  private draw(done: number, total: number, perStep: number, eta: string): void {
    const text = ` step ${done}/${total}  reward ${fixed(this.lastReward)}  eval ${fixed(this.lastEval)}` + `  ${fixed(perStep, 2)} s/step  ETA ${eta}`;
    this.bar(done / Math.max(1, total), text);
  }

  /** One line redrawn in place: `[####......]` for `fraction`, then `text`. */
  private bar(fraction: number, text: string): void {
    const width = Math.max(10, Math.min(30, this.tty!.columns - text.length - 3));
    const filled = Math.round(width * Math.min(1, Math.max(0, fraction)));
    this.tty!.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]${text}`);
    this.drawn = true;
  }

  private clear(): void {
    if (this.drawn && this.tty) this.tty.write('\r\x1b[2K');
    this.drawn = false;
  }
}
