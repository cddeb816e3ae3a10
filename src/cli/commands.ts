/**
 * The `srpo-lab` command registry: one entry per command (its usage line, options, flags and the
 * function in its own file), and `runCli`, which parses arguments, dispatches and turns errors
 * into `srpo-lab COMMAND: message` with exit code 1 (2 for usage errors). Every command that
 * touches runs takes `--db PATH` (default ./lab.db). In-process and side-effect free apart from
 * what the command does, so tests call `runCli` directly.
 *
 * Tests: test/cli/*.test.ts.
 */
import { parseArgs, type ParsedArgs } from './args';
import { evalCommand } from './eval';
import { exportCommand } from './export';
import type { CliIO } from './io';
import { objectiveCommand } from './objective';
import { runsCommand } from './runs';
import { serveCommand } from './serve';
import { showCommand } from './show';
import { resumeCommand, trainCommand } from './train';
import { warmstartCommand } from './warmstart';

interface Command {
  summary: string;
  options: string[];
  flags: string[];
  run: (args: ParsedArgs, out: (line: string) => void, io: CliIO) => Promise<void>;
}

export const COMMANDS = {
  train: {
    summary: 'train --preset NAME [--config FILE] [--set key=value ...]: create a run and train it (Ctrl-C stops; resume later)',
    options: ['db', 'preset', 'config'],
    flags: [],
    run: trainCommand,
  },
  resume: {
    summary: 'resume RUN [--force]: continue a stopped, interrupted or failed run from its latest checkpoint',
    options: ['db'],
    flags: ['force'],
    run: resumeCommand,
  },
  runs: { summary: 'runs: list the runs of the lab database', options: ['db'], flags: [], run: runsCommand },
  show: { summary: 'show RUN: config, status, last metrics and evaluations of a run', options: ['db'], flags: [], run: showCommand },
  eval: {
    summary: 'eval RUN [--checkpoint STEP]: evaluate a checkpoint of a run with its eval settings (writes nothing)',
    options: ['db', 'checkpoint'],
    flags: [],
    run: evalCommand,
  },
  export: { summary: 'export RUN --format json|csv [--out FILE]: metrics and evaluations of a run', options: ['db', 'format', 'out'], flags: [], run: exportCommand },
  warmstart: {
    summary: 'warmstart --preset NAME --out DIR [--epochs N] [--seed N] [--episodes N] [--backend NAME]: produce a warm-start checkpoint',
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
  serve: { summary: 'serve [--port N]: web mode: the lab UI and API on 127.0.0.1 with a one-time token (Ctrl-C stops)', options: ['db', 'port'], flags: [], run: serveCommand },
} satisfies Record<string, Command>;

export type CommandName = keyof typeof COMMANDS;

export function usage(): string {
  return [
    'usage: srpo-lab COMMAND [options]   (run commands take --db PATH, default ./lab.db)',
    ...Object.values(COMMANDS).map((c) => `  ${c.summary}`),
  ].join('\n');
}

/** Runs one command line; returns the exit code. Errors go to `err`. */
export async function runCli(argv: string[], io: CliIO, err: (line: string) => void): Promise<number> {
  const name = argv[0];
  if (!name || name === '--help' || name === 'help') {
    io.out(usage());
    return name ? 0 : 2;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    err(`unknown command "${name}"; valid: ${Object.keys(COMMANDS).join(', ')}\n${usage()}`);
    return 2;
  }
  const cmd: Command = COMMANDS[name as CommandName];
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
