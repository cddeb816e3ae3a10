/**
 * The `srpo-lab` command registry: one entry per command (its usage line, options, flags and the
 * function in its own file), and `runCli`, which parses arguments, dispatches and turns errors
 * into `srpo-lab COMMAND: message` with exit code 1 (2 for usage errors). Every command that
 * touches runs takes `--db PATH` (default ./lab.db). `--help` (or `-h`, `help COMMAND`) after any
 * command prints that command's usage, options and notes, and runs nothing; `--version` prints
 * the package version. Usage lines name the command as the user runs it (labCommand: `npm run
 * lab --` from a clone, `srpo-lab` when installed). In-process and side-effect free apart from
 * what the command does, so tests call `runCli` directly.
 *
 * Tests: test/cli/*.test.ts (help and version: test/cli/help.test.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { PRESETS } from '../core/config/presets';
import { parseArgs, type ParsedArgs } from './args';
import { EVAL_FLAGS, EVAL_OPTIONS, evalCommand } from './eval';
import { exportCommand } from './export';
import { EXPORT_MODEL_FLAGS, EXPORT_MODEL_OPTIONS, exportModelCommand } from './exportModel';
import type { CliIO } from './io';
import { labCommand } from './lab';
import { MODEL_FLAGS, MODEL_OPTIONS, modelCommand } from './model';
import { objectiveCommand } from './objective';
import { optionText } from './optionHelp';
import { runsCommand } from './runs';
import { REPORT_FLAGS, REPORT_OPTIONS, reportCommand } from './report';
import { serveCommand } from './serve';
import { SERVE_MODEL_OPTIONS, serveModelCommand } from './serveModel';
import { showCommand } from './show';
import { SUITE_OPTIONS, suiteCommand } from './suite';
import { resumeCommand, trainCommand } from './train';
import { warmstartCommand } from './warmstart';

interface Command {
  summary: string;
  options: string[];
  flags: string[];
  /** Extra lines for `COMMAND --help` (what the output means, examples). */
  help?: string[];
  run: (args: ParsedArgs, out: (line: string) => void, io: CliIO) => Promise<void>;
}

export const COMMANDS = {
  train: {
    summary: 'train --preset NAME [--config FILE] [--set key=value ...]: create a run and train it (Ctrl-C stops; resume later)',
    options: ['db', 'preset', 'config'],
    flags: [],
    help: [
      'Steps: a run of --set steps=S makes S updates; progress reads "updates committed/S" (30/30 when done).',
      'Each step evaluates first when scheduled (the policy after s updates), then rolls out and updates;',
      'after the last update a final evaluation is recorded at step S. Ctrl-C stops; resume continues.',
      'example: train --preset math-quick --set steps=30 --set rollout.groupSize=4',
    ],
    run: trainCommand,
  },
  resume: {
    summary: 'resume RUN [--force]: continue a stopped, interrupted or failed run from its latest checkpoint',
    options: ['db'],
    flags: ['force'],
    run: resumeCommand,
  },
  runs: {
    summary: 'runs: list the runs of the lab database',
    options: ['db'],
    flags: [],
    help: ['steps: updates committed / planned (a stopped run after 5 of 8 updates reads 5/8); best eval: the highest eval/macro/avg.'],
    run: runsCommand,
  },
  show: {
    summary: 'show RUN: config, status, last metrics and evaluations of a run',
    options: ['db'],
    flags: [],
    help: [
      'progress: updates committed of the planned steps; checkpoints are named by the updates they hold.',
      'evaluations: step s is the policy after s updates; step S (the planned steps) is the final evaluation.',
    ],
    run: showCommand,
  },
  eval: {
    summary:
      "eval RUN [--checkpoint STEP] | eval --data PATH[,PATH...] [--format NAME] --workflow math|search|single [--corpus PATH] (--policy gold | --run N [--checkpoint S] | --model DIR) [--n N] [--limit N] [--json] | eval --preset NAME|--config FILE [--set k=v] --policy gold: the paper's table (writes nothing)",
    options: EVAL_OPTIONS,
    flags: EVAL_FLAGS,
    run: evalCommand,
  },
  export: {
    summary: 'export RUN --format json|csv [--out FILE [--force]]: metrics and evaluations of a run',
    options: ['db', 'format', 'out'],
    flags: ['force'],
    help: [
      "csv: run,step,key,value,wall_time, the columns of the UI's metrics CSV (Reports > CSV of metrics).",
      'Writes to --out FILE; without it, to stdout when piped (… | head), never onto a terminal.',
      'An existing FILE is kept unless --force; a symbolic link at FILE is never written through.',
    ],
    run: exportCommand,
  },
  report: {
    summary:
      "report RUN [RUN ...] | report --suite ID [--baseline LABEL]  --format html|md|pdf|csv --out FILE [--force]: the Reports view's documents from the command line",
    options: REPORT_OPTIONS,
    flags: REPORT_FLAGS,
    help: [
      "html and md: the report (runs, evaluation table, figures, config); pdf: the same HTML printed by headless Chromium; csv: the runs' (or suite's) table.",
      'Also csv-metrics (run,step,key,value,wall_time) and csv-events (the training trace). An existing FILE is kept unless --force.',
    ],
    run: (args, out) => reportCommand(args, out),
  },
  warmstart: {
    summary: 'warmstart --preset NAME --out DIR [--epochs N] [--seed N] [--episodes N] [--backend NAME]: produce a warm start (a model folder)',
    options: ['preset', 'out', 'epochs', 'seed', 'episodes', 'backend'],
    flags: [],
    run: warmstartCommand,
  },
  objective: {
    summary: 'objective [--batch FILE] [--all] [--json] [--set key=value ...] [--backend NAME]: the SRPO objective of a batch',
    options: ['batch', 'backend'],
    flags: ['all', 'json'],
    run: (args, out) => objectiveCommand(args, out),
  },
  'export-model': {
    summary:
      'export-model RUN [--step N] [--role R] --out DIR [--merge]: a trained Hugging Face policy as a peft adapter folder, or with --merge a bf16 model folder transformers opens',
    options: EXPORT_MODEL_OPTIONS,
    flags: EXPORT_MODEL_FLAGS,
    help: [
      'Default: the latest checkpoint; --role names the policy of a per-role run (shared runs have one).',
      'Adapter: PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(BASE), DIR). --merge: AutoModelForCausalLM.from_pretrained(DIR).',
    ],
    run: (args, out) => exportModelCommand(args, out),
  },
  model: {
    summary:
      'model info|logprobs|generate --model DIR [--adapter DIR] [--lora R] [--ids 1,2,3 | --text "..." | --chat "..."] [--max-new-tokens N --temperature T --top-p P --top-k K --seed S] [--json]: a Hugging Face model folder (Qwen3, Qwen2.5, Llama 3)',
    options: MODEL_OPTIONS,
    flags: MODEL_FLAGS,
    run: (args, out) => modelCommand(args, out),
  },
  suite: {
    summary:
      "suite run FILE|--preset A[,B] --seeds 1,2,3 [--vary k=v1,v2] [--set k=v] [--baseline LABEL] [--parallel N] | suite resume ID | suite show ID [--baseline LABEL] [--format text|md|csv] | suite list: experiment suites (runs x seeds) and the paper's tables",
    options: SUITE_OPTIONS,
    flags: [],
    run: suiteCommand,
  },
  serve: {
    summary:
      'serve [--port N] [--allow DIR ...]: web mode: the lab UI and API on 127.0.0.1 with a one-time token; clients name files only under the --allow folders (default: the database folder and resources/) (Ctrl-C stops)',
    options: ['db', 'port', 'allow'],
    flags: [],
    run: serveCommand,
  },
  'serve-model': {
    summary:
      'serve-model (--model DIR [--adapter DIR] | --run N [--step S] [--role R]) [--port P] [--max-tokens N]: an OpenAI-compatible endpoint of a model or checkpoint, without training (prints its URL and key; Ctrl-C stops)',
    options: SERVE_MODEL_OPTIONS,
    flags: [],
    help: [
      "For evaluating with any external harness: the endpoint of the external workflow (docs/EXTERNAL_AGENTS.md), answering /v1/chat/completions with each request's own sampling settings.",
      'example: serve-model --run 3 --step 30 (the checkpoint after 30 updates), then OPENAI_BASE_URL and OPENAI_API_KEY as printed',
    ],
    run: serveModelCommand,
  },
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;

export function usage(): string {
  const lab = labCommand();
  return [
    `usage: ${lab} COMMAND [options]   (run commands take --db PATH, default ./lab.db)`,
    ...Object.values(COMMANDS).map((c) => `  ${c.summary}`),
    `  ${lab} COMMAND --help: that command's options and notes;  ${lab} --version: the version`,
  ].join('\n');
}

/** `COMMAND --help`: its usage line, what it does, its options and flags, its notes. */
export function commandHelp(name: CommandName): string {
  const cmd: Command = COMMANDS[name];
  const colon = cmd.summary.indexOf(': ');
  const [use, what] = colon < 0 ? [cmd.summary, ''] : [cmd.summary.slice(0, colon), cmd.summary.slice(colon + 2)];
  const lines = [`usage: ${labCommand()} ${use}`];
  if (what) lines.push('', `  ${what}`);
  // One line per option: its value placeholder and what it means (optionHelp.ts).
  const rows: [string, string][] = [...cmd.options, ...cmd.flags].map((o) => {
    const t = optionText(name, o);
    return [`--${o}${t?.value ? ` ${t.value}` : ''}`, t?.text ?? ''];
  });
  if (use.includes('--set')) rows.push(['--set key=value', 'change one config field (repeatable; dotted paths: rollout.groupSize=4)']);
  rows.push(['--help', 'this text']);
  const width = Math.max(...rows.map(([k]) => k.length));
  lines.push('', 'options:', ...rows.map(([k, t]) => `  ${k.padEnd(width)}  ${t}`));
  if (cmd.help?.length) lines.push('', ...cmd.help.map((l) => `  ${l}`));
  if (name === 'train') lines.push('', 'presets:', ...presetLines());
  return lines.join('\n');
}

/** `train --help`'s list of presets: name and description, one line each. */
function presetLines(): string[] {
  const entries = Object.entries(PRESETS) as [string, { description: string }][];
  const width = Math.max(...entries.map(([n]) => n.length));
  return entries.map(([n, p]) => `  ${n.padEnd(width)}  ${p.description}`);
}

/** The package version (package.json beside src/). */
export function labVersion(): string {
  return (JSON.parse(readFileSync(resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;
}

const HELP = ['--help', '-h'];

/** Runs one command line; returns the exit code. Errors go to `err`. */
export async function runCli(argv: string[], io: CliIO, err: (line: string) => void): Promise<number> {
  const name = argv[0];
  if (name === '--version' || name === '-V' || name === 'version') {
    io.out(`srpo-lab ${labVersion()}`);
    return 0;
  }
  if (name === 'help' && argv[1] !== undefined && Object.hasOwn(COMMANDS, argv[1])) {
    io.out(commandHelp(argv[1] as CommandName));
    return 0;
  }
  if (!name || HELP.includes(name) || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    err(`unknown command "${name}"; valid: ${Object.keys(COMMANDS).join(', ')}\n${usage()}`);
    return 2;
  }
  const cmd: Command = COMMANDS[name as CommandName];
  // `--help` anywhere (but as a `--set` value) asks for the command's help and runs nothing.
  if (argv.slice(1).some((a, i, rest) => HELP.includes(a) && rest[i - 1] !== '--set')) {
    io.out(commandHelp(name as CommandName));
    return 0;
  }
  let args: ParsedArgs;
  try {
    args = parseArgs(argv, cmd);
  } catch (e) {
    err(`srpo-lab ${name}: ${(e as Error).message}`);
    return 2;
  }
  try {
    await cmd.run(args, io.out, io);
    return 0;
  } catch (e) {
    err(`srpo-lab ${name}: ${(e as Error).message}`);
    return 1;
  }
}
