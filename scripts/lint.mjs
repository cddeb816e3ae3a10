// `npm run lint`: ESLint (eslint.config.mjs) and the format checks side by side, each in its own
// process, so on two cores the lint takes about as long as the slowest, not their sum. Each tool's
// output is printed whole, in a block, when it ends; the exit code is 1 when any fails.
// `npm run format` (`--format`): the same formatters rewrite the tree instead of checking it.
// Other arguments are not passed on: it always lints the tree.
// The layout: oxfmt (.oxfmtrc.json) for TypeScript and JavaScript, Prettier (.prettierrc.json) for
// the Vue files. oxfmt is Prettier-compatible and gives Prettier's layout on every .ts/.js file of
// the tree (one comment placement differed, in grade.ts) in a small part of Prettier's time
// (decision 076). Its Vue templates differ from Prettier's in whitespace between inline elements,
// which can change what is shown, so the Vue files stay with Prettier. Both skip what .prettierignore and .gitignore list (oxfmt reads both).
// Tested by running it: CI's lint step is this script (.ci/run).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
/** A package's command-line entry, from its package.json `bin` (their `exports` do not list it). */
const binOf = (pkg) => {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = require(manifest);
  return join(dirname(manifest), typeof bin === 'string' ? bin : bin[pkg]);
};
const format = process.argv.includes('--format');
const formatters = [
  { name: 'oxfmt', bin: binOf('oxfmt'), args: [format ? '--write' : '--check', '!**/*.vue', '.'] },
  { name: 'prettier (Vue files)', bin: binOf('prettier'), args: [format ? '--write' : '--check', '**/*.vue'] },
];
const tools = format ? formatters : [{ name: 'eslint', bin: binOf('eslint'), args: ['.'] }, ...formatters];

const run = ({ name, bin, args }) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('error', (err) => resolve({ name, code: 1, text: `${name}: ${err.message}\n` }));
    child.on('close', (code) => resolve({ name, code: code ?? 1, text: Buffer.concat(out).toString() }));
  });

let failed = false;
for (const result of await Promise.all(tools.map(run))) {
  process.stdout.write(`> ${result.name}: ${result.code === 0 ? 'passed' : `failed (exit ${result.code})`}\n${result.text}`);
  if (result.code !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
