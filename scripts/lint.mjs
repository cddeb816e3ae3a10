// `npm run lint`: ESLint (eslint.config.mjs) and `prettier --check` side by side, each in its own
// process, so on two cores the lint takes about as long as the slower of the two, not their sum.
// Each tool's output is printed whole, in a block, when it ends; the exit code is 1 when either
// fails. Arguments are not passed on: it always lints the tree.
// Prettier reads TypeScript and JavaScript with the oxc parser (@prettier/plugin-oxc, .prettierrc.json):
// the same output on this tree as its babel-ts parser, and about a quarter less time (babel-ts was
// already a third less than its default typescript parser). Vue files keep Prettier's own parsers.
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
const tools = [
  { name: 'eslint', bin: binOf('eslint'), args: ['.'] },
  // --cache: a file whose content and options are unchanged since it last passed is not printed again
  // (node_modules/.cache/prettier; a fresh clone, as CI, checks every file). Not ESLint's cache: with
  // type-aware rules, a change in one file can change what is reported in another.
  { name: 'prettier', bin: binOf('prettier'), args: ['--check', '--cache', '--cache-strategy', 'content', '.'] },
];

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
