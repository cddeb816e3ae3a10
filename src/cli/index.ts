#!/usr/bin/env node
/**
 * `srpo-lab`, the lab's command line (from the repo: `npm run lab -- COMMAND ...`). Commands
 * live in a registry; each is one file. This build has `objective`; the training commands
 * (train, resume, runs, show, eval, export, warmstart, serve) arrive with the trainer issue.
 */
import { parseArgs } from './args';
import { objectiveCommand } from './objective';

const COMMANDS = {
  objective: {
    summary: 'objective [--batch FILE] [--all] [--json] [--set key=value ...] [--backend NAME]: the SRPO objective of a batch',
    options: ['batch', 'backend'],
    flags: ['all', 'json'],
    run: objectiveCommand,
  },
} satisfies Record<string, { summary: string; options: string[]; flags: string[]; run: typeof objectiveCommand }>;

function usage(): string {
  return ['usage: srpo-lab COMMAND [options]', ...Object.values(COMMANDS).map((c) => `  ${c.summary}`)].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const name = argv[0];
  if (!name || name === '--help' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    console.error(`unknown command "${name}"; valid: ${Object.keys(COMMANDS).join(', ')}\n${usage()}`);
    return 2;
  }
  const cmd = COMMANDS[name as keyof typeof COMMANDS];
  try {
    await cmd.run(parseArgs(argv, cmd), (line) => console.log(line));
    return 0;
  } catch (err) {
    console.error(`srpo-lab ${name}: ${(err as Error).message}`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
