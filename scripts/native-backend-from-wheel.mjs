// Builds the native tfjs backend (@tensorflow/tfjs-node, TensorFlow's CPU kernels) on a machine
// whose npm install dropped it, from the TensorFlow CPU wheel of a local Python wheel store.
//
//   node scripts/native-backend-from-wheel.mjs          build when needed (`npm run native:wheel`)
//   node scripts/native-backend-from-wheel.mjs --probe  only say whether the backend loads (exit 0
//                                                       when it does, 3 when it does not); builds nothing
//   --force                                             rebuild even when it already loads
//   --wheel PATH                                        the wheel to use (or SRPO_LAB_TF_WHEEL; default: the newest
//                                                       tensorflow_cpu-*manylinux*x86_64.whl in /opt/pypi/files
//                                                       or the folders of SRPO_LAB_WHEEL_DIRS, colon-separated)
//
// Why: tfjs-node's own install downloads libtensorflow 2.9.1 from a host the build machines
// cannot reach, so npm drops the optional package and everything runs on WebAssembly. The wheel
// (tensorflow_cpu-2.x, manylinux x86_64) carries what the binding needs: libtensorflow_cc.so.2
// (it exports the C and eager C API), libtensorflow_framework.so.2 and the C headers. Steps: `npm
// pack` the version package.json names, unpack it into node_modules/@tensorflow/tfjs-node,
// install its missing dependencies without install scripts (never a second @tensorflow/tfjs:
// tfjs-node must register its kernels with the lab's copy), extract only the needed members of
// the wheel into the package's deps/, build the binding with node-gyp against this Node's own
// headers, and check that it loads on the `tensorflow` backend.
//
// What it is not: part of anyone's install. A user's `npm install` gets the real package with the
// real libtensorflow; the lab never calls this script and runs without it (wasm). Idempotent: when
// the backend already loads it exits 0 at once, silently; without a wheel it says so in one line
// and exits 0. Linux x86_64 only (the wheel's platform). Tested by running it: .ci/run does, then
// runs the backend-dependent tests on it (`npm run test:native`).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = '@tensorflow/tfjs-node';
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = join(root, 'node_modules', '@tensorflow', 'tfjs-node');
/** Where wheel stores are looked for (SRPO_LAB_WHEEL_DIRS, colon-separated, replaces the list). */
const WHEEL_DIRS = process.env.SRPO_LAB_WHEEL_DIRS?.split(':').filter(Boolean) ?? ['/opt/pypi/files'];
/** Headers the binding includes, and what they include in turn (prefixes inside the wheel's tensorflow/include/). */
const HEADER_PREFIXES = ['tensorflow/c/', 'tensorflow/core/platform/', 'tsl/', 'xla/tsl/'];
/** The libraries, and the names the linker (-ltensorflow -ltensorflow_framework) and the loader look for. */
const LIBRARIES = ['libtensorflow_cc.so.2', 'libtensorflow_framework.so.2'];
const LINKS = {
  'libtensorflow.so.2': 'libtensorflow_cc.so.2',
  'libtensorflow.so': 'libtensorflow_cc.so.2',
  'libtensorflow_framework.so': 'libtensorflow_framework.so.2',
};

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const option = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};

function fail(step, message) {
  console.error(`native-backend-from-wheel: ${step}: ${message}`);
  process.exit(1);
}

/** Runs a command; on failure exits naming the step and the command's output tail. */
function run(step, cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    fail(step, `${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})\n${out}`);
  }
  return r.stdout;
}

/** Loads tfjs-node in a fresh Node from the project root; null when it runs on `tensorflow`, else why not. */
function loadError() {
  if (!existsSync(join(pkgDir, 'package.json'))) return `${PACKAGE} is not installed`;
  const probe = `const tf = require('${PACKAGE}'); if (tf.getBackend() !== 'tensorflow') throw new Error('backend is ' + tf.getBackend()); console.log(tf.version['tfjs-node'])`;
  const r = spawnSync(process.execPath, ['-e', probe], { cwd: root, encoding: 'utf8', env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  if (r.status === 0) return null;
  const lines = (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n');
  return lines.find((l) => /Error/.test(l))?.trim() ?? lines[0];
}

function wantedVersion() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const v = pkg.optionalDependencies?.[PACKAGE] ?? pkg.dependencies?.[PACKAGE];
  if (!v) fail('package.json', `${PACKAGE} is not in optionalDependencies`);
  return v;
}

function findWheel() {
  const given = option('--wheel') ?? process.env.SRPO_LAB_TF_WHEEL;
  if (given) return existsSync(given) ? given : fail('wheel', `${given} does not exist`);
  for (const dir of WHEEL_DIRS) {
    if (!existsSync(dir)) continue;
    const found = readdirSync(dir)
      .filter((f) => /^tensorflow_cpu-.*manylinux.*x86_64\.whl$/.test(f))
      .sort();
    if (found.length) return join(dir, found[found.length - 1]);
  }
  return null;
}

/** npm pack + unpack into node_modules/@tensorflow/tfjs-node (replacing whatever was there). */
function unpackPackage(version, work) {
  run('npm pack', 'npm', ['pack', `${PACKAGE}@${version}`, '--silent', '--pack-destination', work], { cwd: work });
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (!tgz) fail('npm pack', `no tarball in ${work}`);
  run('unpack', 'tar', ['xzf', join(work, tgz), '-C', work]);
  rmSync(pkgDir, { recursive: true, force: true });
  mkdirSync(dirname(pkgDir), { recursive: true });
  renameSync(join(work, 'package'), pkgDir);
}

/**
 * The package's dependencies that do not resolve from its folder, installed into its own
 * node_modules from a scratch project (so npm touches neither the root's tree nor lockfile).
 * @tensorflow/tfjs is never installed here: it must be the lab's copy, found one level up.
 */
function installMissingDependencies(work) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const requireFromPkg = createRequire(join(pkgDir, 'package.json'));
  const missing = Object.entries(pkg.dependencies ?? {}).filter(([name]) => {
    try {
      requireFromPkg.resolve(`${name}/package.json`);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.some(([name]) => name === '@tensorflow/tfjs')) fail('dependencies', `@tensorflow/tfjs does not resolve from ${pkgDir}; run npm install first`);
  if (!missing.length) return;
  const scratch = join(work, 'deps');
  mkdirSync(scratch);
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ private: true, dependencies: Object.fromEntries(missing) }));
  run('dependencies', 'npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--omit=dev', '--loglevel=error'], {
    cwd: scratch,
  });
  rmSync(join(pkgDir, 'node_modules'), { recursive: true, force: true });
  renameSync(join(scratch, 'node_modules'), join(pkgDir, 'node_modules'));
}

/** The two libraries into deps/lib (with the linker's names as links), the headers into deps/include. */
function extractWheel(wheel) {
  const lib = join(pkgDir, 'deps', 'lib');
  const include = join(pkgDir, 'deps', 'include');
  rmSync(join(pkgDir, 'deps'), { recursive: true, force: true });
  mkdirSync(lib, { recursive: true });
  mkdirSync(include, { recursive: true });
  // Only the needed members (the wheel is ~400 MB compressed, 13,000 headers).
  const py = `
import sys, zipfile, shutil, os
wheel, lib, include, libs, prefixes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(','), sys.argv[5].split(',')
with zipfile.ZipFile(wheel) as z:
    names = set(z.namelist())
    for l in libs:
        m = 'tensorflow/' + l
        if m not in names: sys.exit('wheel has no ' + m)
        with z.open(m) as src, open(os.path.join(lib, l), 'wb') as dst: shutil.copyfileobj(src, dst, 1 << 22)
    n = 0
    for m in names:
        rel = m[len('tensorflow/include/'):] if m.startswith('tensorflow/include/') else None
        if rel and not m.endswith('/') and any(rel.startswith(p) for p in prefixes):
            out = os.path.join(include, rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(m) as src, open(out, 'wb') as dst: shutil.copyfileobj(src, dst)
            n += 1
    if not os.path.exists(os.path.join(include, 'tensorflow/c/c_api.h')): sys.exit('wheel has no tensorflow/include/tensorflow/c/c_api.h')
`;
  run('extract wheel', 'python3', ['-c', py, wheel, lib, include, LIBRARIES.join(','), HEADER_PREFIXES.join(',')]);
  for (const [link, target] of Object.entries(LINKS)) symlinkSync(target, join(lib, link));
}

/** node-gyp: npm's own copy (npm sets npm_config_node_gyp for scripts), else the one beside npm, else PATH. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  const js = candidates.find((p) => p && existsSync(p));
  return js ? [process.execPath, [js]] : ['node-gyp', []];
}

/** Builds lib/napi-v{N}/tfjs_binding.node with the variables node-pre-gyp would pass (the package's `binary` section). */
function buildBinding() {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const { module_name: moduleName, module_path: modulePath, napi_versions: napiVersions } = pkg.binary ?? {};
  if (!moduleName || !modulePath || !napiVersions) fail('binding', `${PACKAGE}'s package.json has no binary.module_name / module_path / napi_versions`);
  const napi = Math.max(...napiVersions.filter((v) => v <= Number(process.versions.napi)));
  if (!Number.isFinite(napi)) fail('binding', `this Node supports N-API ${process.versions.napi}, the package needs one of ${napiVersions.join(', ')}`);
  const nodedir = resolve(dirname(process.execPath), '..');
  if (!existsSync(join(nodedir, 'include', 'node', 'node_api.h')))
    fail('binding', `no Node headers under ${nodedir}/include/node (node-gyp would download them; these machines cannot)`);
  const [cmd, pre] = nodeGyp();
  run(
    'binding',
    cmd,
    [
      ...pre,
      'rebuild',
      `--nodedir=${nodedir}`,
      '--jobs=max',
      `--module_name=${moduleName}`,
      `--module_path=${resolve(pkgDir, modulePath.replace('{napi_build_version}', String(napi)))}`,
      `--napi_build_version=${napi}`,
    ],
    { cwd: pkgDir },
  );
}

function main() {
  const probe = flag('--probe');
  const before = flag('--force') ? 'forced' : loadError();
  if (probe) {
    console.log(before ? `native backend absent: ${before}` : 'native backend present');
    process.exit(before ? 3 : 0);
  }
  if (!before) return; // already loads: nothing to do
  const wheel = findWheel();
  if (!wheel) {
    console.log(`native-backend-from-wheel: no tensorflow_cpu wheel in ${WHEEL_DIRS.join(', ')} (or SRPO_LAB_TF_WHEEL); nothing to do`);
    return;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') fail('platform', `the wheel is for linux x64, this is ${process.platform} ${process.arch}`);
  if (spawnSync('python3', ['--version']).status !== 0) {
    console.log('native-backend-from-wheel: python3 (which reads the wheel) is not on PATH; nothing to do');
    return;
  }
  const t0 = performance.now();
  const work = mkdtempSync(join(tmpdir(), 'tfjs-node-'));
  try {
    const version = wantedVersion();
    console.log(`native-backend-from-wheel: ${PACKAGE}@${version} (${before}); TensorFlow from ${wheel}`);
    unpackPackage(version, work);
    installMissingDependencies(work);
    extractWheel(wheel);
    buildBinding();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const after = loadError();
  if (after) fail('check', `built, but ${PACKAGE} does not load: ${after}`);
  console.log(`native-backend-from-wheel: ${PACKAGE} loads on the tensorflow backend (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}

main();
