// Flips the Electron fuses of a packaged SRPO Lab build (@electron/fuses): switches baked into
// the Electron binary that no flag or environment variable can turn back on.
//
//   RunAsNode off                        ELECTRON_RUN_AS_NODE cannot turn the app into a plain Node
//   EnableCookieEncryption on            cookies on disk encrypted with the OS keychain
//   EnableNodeOptionsEnvironmentVariable off   NODE_OPTIONS cannot inject code (--require)
//   EnableNodeCliInspectArguments off    --inspect / --inspect-brk cannot attach a debugger
//   OnlyLoadAppFromAsar on               the app code only from app.asar (no loose app/ folder)
//
// Left as Electron ships them: EnableEmbeddedAsarIntegrityValidation (needs the packager to
// embed the asar hash: macOS/Windows only), GrantFileProtocolExtraPrivileges (the app's page is
// loaded from file://), LoadBrowserProcessSpecificV8Snapshot, WasmTrapHandlers.
//
// Where it runs: on the packaged binary, after packaging and before code signing. With
// electron-builder, `"afterPack": "scripts/set-fuses.mjs"` (the default export below); with any
// other packager, `node scripts/set-fuses.mjs path/to/packaged/srpo-lab` (a macOS .app path
// works too). It reads the fuses back and fails if any differs. Not for the development binary
// in node_modules (OnlyLoadAppFromAsar would stop `npm run dev` from loading out/main).
// Tested by test/main/fuses.test.ts (the exact settings, flipped on a fake fuse wire).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flipFuses, FuseState, FuseV1Options, FuseVersion, getCurrentFuseWire } from '@electron/fuses';

/** The fuses a packaged build must have, by @electron/fuses option name. */
export const FUSE_SETTINGS = Object.freeze({
  RunAsNode: false,
  EnableCookieEncryption: true,
  EnableNodeOptionsEnvironmentVariable: false,
  EnableNodeCliInspectArguments: false,
  OnlyLoadAppFromAsar: true,
});

/** The @electron/fuses config of FUSE_SETTINGS (an unknown name is an error naming it). */
export function fuseConfig(settings = FUSE_SETTINGS) {
  const config = { version: FuseVersion.V1 };
  for (const [name, on] of Object.entries(settings)) {
    const index = FuseV1Options[name];
    if (typeof index !== 'number')
      throw new Error(
        `unknown Electron fuse "${name}"; known: ${Object.keys(FuseV1Options)
          .filter((k) => Number.isNaN(Number(k)))
          .join(', ')}`,
      );
    config[index] = on;
  }
  return config;
}

/** Flips the fuses of the Electron binary at `electronPath`, then reads them back; throws naming any that differs. */
export async function setFuses(electronPath, settings = FUSE_SETTINGS) {
  await flipFuses(electronPath, { ...fuseConfig(settings), resetAdHocDarwinSignature: process.platform === 'darwin' && process.arch === 'arm64' });
  const wire = await getCurrentFuseWire(electronPath);
  const wrong = Object.entries(settings).filter(([name, on]) => wire[FuseV1Options[name]] !== (on ? FuseState.ENABLE : FuseState.DISABLE));
  if (wrong.length) throw new Error(`${electronPath}: fuses not set after flipping: ${wrong.map(([n]) => n).join(', ')}`);
  return wire;
}

/** electron-builder afterPack hook: the packaged executable of this platform. */
export default async function afterPack(context) {
  const name = context.packager.appInfo.productFilename;
  const binary = {
    darwin: join(context.appOutDir, `${name}.app`),
    mas: join(context.appOutDir, `${name}.app`),
    win32: join(context.appOutDir, `${name}.exe`),
    linux: join(context.appOutDir, context.packager.executableName ?? name),
  }[context.electronPlatformName];
  if (!binary) throw new Error(`set-fuses: unknown platform "${context.electronPlatformName}"`);
  await setFuses(binary);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = process.argv[2];
  if (!target) {
    console.error('usage: node scripts/set-fuses.mjs PATH_TO_PACKAGED_ELECTRON_BINARY');
    process.exit(2);
  }
  setFuses(target).then(
    () =>
      console.log(
        `fuses set on ${target}: ${Object.entries(FUSE_SETTINGS)
          .map(([n, on]) => `${n} ${on ? 'on' : 'off'}`)
          .join(', ')}`,
      ),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
