// Runs the test suite on another Node.js (default: the current LTS from scripts/node-lts.mjs) with
// this checkout's node_modules: better-sqlite3 is rebuilt for that Node's ABI first, and every
// process the tests start (vitest's workers, engine forks, CLI children, worker threads) runs on
// it because its bin folder leads PATH and the suite itself is started by it (children use
// process.execPath). The native tfjs binding (N-API) needs no rebuild. Meanwhile nothing else can
// use this node_modules on the current Node (better-sqlite3 is built for the other one).
//
//   npm run test:lts                       the pinned LTS, then better-sqlite3 rebuilt back for this Node
//   node scripts/test-on-lts.mjs --no-restore [--version 22.x] [vitest args...]
//
// --no-restore (CI: the machine is thrown away) leaves better-sqlite3 built for the LTS; run
// `npm run rebuild:node` (or this script without it) to switch back. Exit status: the suite's.
// Stopped while the suite runs (Ctrl-C, SIGTERM from `timeout` or a CI runner), it passes the
// signal on to the suite, waits for it, and still rebuilds better-sqlite3 for this Node: an
// interrupted run used to leave node_modules without a binding this Node can load. (Under
// `npm run`, npm itself exits on the signal; this script finishes the rebuild after it.)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const take = (flag, hasValue) => {
  const i = args.indexOf(flag);
  if (i < 0) return undefined;
  const [, value] = args.splice(i, hasValue ? 2 : 1);
  return hasValue ? value : true;
};
const restore = !take('--no-restore', false);
const version = take('--version', true);

const bin = execFileSync(process.execPath, [join(root, 'scripts', 'node-lts.mjs'), ...(version ? ['--version', version] : [])], {
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
}).trim();
const nodeDir = dirname(bin);
const ltsNode = join(bin, 'node');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
const ltsVersion = execFileSync(ltsNode, ['--version'], { encoding: 'utf8' }).trim();

/** `npm rebuild better-sqlite3` under the given environment (node-gyp builds against nodedir's headers). */
function rebuildSqlite(rebuildEnv, label) {
  console.log(`test-on-lts: rebuilding better-sqlite3 for ${label}...`);
  const r = spawnSync('npm', ['rebuild', 'better-sqlite3'], { cwd: root, env: rebuildEnv, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`test-on-lts: rebuilding better-sqlite3 for ${label} failed (exit ${r.status})`);
    process.exit(r.status ?? 1);
  }
}

rebuildSqlite({ ...env, npm_config_nodedir: nodeDir }, `Node ${ltsVersion}`);
console.log(`test-on-lts: vitest on Node ${ltsVersion} (${ltsNode})`);
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
const suite = spawn(ltsNode, [vitest, 'run', ...args], { cwd: root, env, stdio: 'inherit' });
let stoppedBy = null;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stoppedBy = signal;
    console.error(`test-on-lts: ${signal}: stopping the suite, then restoring better-sqlite3`);
    suite.kill(signal);
  });
}
suite.on('close', (status) => {
  if (restore) rebuildSqlite(process.env, `Node ${process.version} (restored)`);
  process.exit(stoppedBy ? 128 + constants.signals[stoppedBy] : (status ?? 1));
});
