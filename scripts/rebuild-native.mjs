// Switches the native module (better-sqlite3) between the two ABIs this project needs:
//
//   node scripts/rebuild-native.mjs            Electron's ABI, for the desktop app (`predev`/`prestart`;
//                                              a packaging script would run it too). Uses @electron/rebuild,
//                                              which downloads Electron's headers: needs network access to
//                                              Electron's hosts. Never run from install or CI.
//   node scripts/rebuild-native.mjs --node     Node's ABI again, for the tests (`npm run rebuild:node`):
//                                              `npm rebuild better-sqlite3` (prebuilt binary or a build from
//                                              source, ~45 s on 2 cores).
//   node scripts/rebuild-native.mjs --check    Exit 1 with a hint when better-sqlite3 does not load under this
//                                              Node (`pretest`): an Electron build left by `npm run dev`.
//   --force                                    Rebuild even when the stamp says it is already built.
//
// The ABI the binary was last built for is remembered in node_modules/.srpo-lab/native-abi.json
// together with the binary's sha256, so a binary replaced by other means (npm ci, npm rebuild) is
// not mistaken for the one the stamp describes. node_modules/ is the right home: a fresh install
// builds for Node and removes the stamp with it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULE = 'better-sqlite3';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const stampFile = join(root, 'node_modules', '.srpo-lab', 'native-abi.json');
const args = new Set(process.argv.slice(2));
const force = args.has('--force');

const HINT = `better-sqlite3 is built for Electron (after \`npm run dev\` / \`npm start\`). Run \`npm run rebuild:node\` before \`npm test\`.`;

function moduleDir() {
  return dirname(require.resolve(`${MODULE}/package.json`));
}

function binaryPath() {
  return join(moduleDir(), 'build', 'Release', 'better_sqlite3.node');
}

function binaryHash() {
  const p = binaryPath();
  return existsSync(p) ? createHash('sha256').update(readFileSync(p)).digest('hex') : null;
}

function readStamp() {
  try {
    const s = JSON.parse(readFileSync(stampFile, 'utf8'));
    // A stamp describes only the binary it was written for.
    return s && s.sha256 === binaryHash() ? s : null;
  } catch {
    return null;
  }
}

function writeStamp(stamp) {
  mkdirSync(dirname(stampFile), { recursive: true });
  const version = JSON.parse(readFileSync(join(moduleDir(), 'package.json'), 'utf8')).version;
  writeFileSync(
    stampFile,
    `${JSON.stringify({ module: MODULE, moduleVersion: version, ...stamp, sha256: binaryHash(), builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
}

/** Loads better-sqlite3 in a fresh plain Node (this one), returns null or the load error. */
function loadsUnderNode() {
  const r = spawnSync(process.execPath, ['-e', `new (require(${JSON.stringify(MODULE)}))(':memory:').close()`], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? null : (r.stderr || r.stdout || `exit ${r.status}`).trim();
}

function electronVersion() {
  return JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
}

/** Electron's NODE_MODULE_VERSION, when node-abi (a dependency of @electron/rebuild) knows it. */
function electronAbi(version) {
  try {
    return require('node-abi').getAbi(version, 'electron');
  } catch {
    return null;
  }
}

async function rebuildForElectron() {
  const version = electronVersion();
  const stamp = readStamp();
  if (!force && stamp?.runtime === 'electron' && stamp.electronVersion === version) {
    console.log(`${MODULE}: already built for Electron ${version} (ABI ${stamp.abi ?? '?'}); --force to rebuild`);
    return 0;
  }
  let rebuild;
  try {
    ({ rebuild } = require('@electron/rebuild'));
  } catch {
    console.error('@electron/rebuild is not installed: run `npm install` (it is a devDependency)');
    return 1;
  }
  console.log(`${MODULE}: rebuilding for Electron ${version} (downloads Electron's headers once)...`);
  try {
    await rebuild({ buildPath: root, electronVersion: version, onlyModules: [MODULE], force: true, mode: 'sequential' });
  } catch (err) {
    // A half-done build is neither ABI: forget what the stamp said.
    rmSync(stampFile, { force: true });
    console.error(`${MODULE}: Electron rebuild failed: ${err?.message ?? err}`);
    return 1;
  }
  const abi = electronAbi(version);
  writeStamp({ runtime: 'electron', electronVersion: version, abi });
  console.log(`${MODULE}: built for Electron ${version} (ABI ${abi ?? '?'}). Before \`npm test\`, run \`npm run rebuild:node\`.`);
  return 0;
}

function rebuildForNode() {
  const abi = process.versions.modules;
  if (!force && loadsUnderNode() === null) {
    writeStamp({ runtime: 'node', nodeVersion: process.version, abi });
    console.log(`${MODULE}: already loads under Node ${process.version} (ABI ${abi}); --force to rebuild`);
    return 0;
  }
  console.log(`${MODULE}: rebuilding for Node ${process.version} (ABI ${abi})...`);
  const npm = process.env.npm_execpath;
  // Under `npm run`, npm_execpath is npm's CLI script: run it with this Node (no shell, any OS).
  const r =
    npm && npm.endsWith('.js')
      ? spawnSync(process.execPath, [npm, 'rebuild', MODULE], { cwd: root, stdio: 'inherit' })
      : spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['rebuild', MODULE], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  const err = r.status === 0 ? loadsUnderNode() : `npm rebuild exited with ${r.status ?? r.signal}`;
  if (err !== null) {
    rmSync(stampFile, { force: true });
    console.error(`${MODULE}: Node rebuild failed: ${err}`);
    return 1;
  }
  writeStamp({ runtime: 'node', nodeVersion: process.version, abi });
  console.log(`${MODULE}: built for Node ${process.version} (ABI ${abi}).`);
  return 0;
}

function check() {
  const err = loadsUnderNode();
  if (err === null) return 0;
  const stamp = readStamp();
  if (/NODE_MODULE_VERSION|was compiled against a different Node\.js version/.test(err) || stamp?.runtime === 'electron') {
    console.error(`\n${HINT}\n`);
  } else {
    console.error(`\n${MODULE} does not load under Node ${process.version}:\n${err.split('\n').slice(0, 6).join('\n')}\nTry \`npm run rebuild:node\`.\n`);
  }
  return 1;
}

const code = args.has('--check') ? check() : args.has('--node') ? rebuildForNode() : await rebuildForElectron();
process.exit(code);
