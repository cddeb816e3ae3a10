#!/usr/bin/env node
/**
 * `srpo-lab`, the lab's command line: the process entry (installed as the package's `bin`
 * through the shim srpo-lab.cjs; from the repo `npm run lab -- COMMAND ...`). The commands and
 * their registry are in commands.ts, one file per command. Tests: test/cli/.
 */
import { runCli } from './commands';
import { processIO } from './io';

void runCli(process.argv.slice(2), processIO(), (line) => console.error(line)).then((code) => {
  process.exitCode = code;
});
