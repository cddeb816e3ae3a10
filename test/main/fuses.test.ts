/**
 * Electron fuses of packaged builds (issue: none were set). scripts/set-fuses.mjs holds the exact
 * settings (RunAsNode off, cookie encryption on, only-load-app-from-asar on, NODE_OPTIONS and
 * --inspect off) and flips them with @electron/fuses; here on a fake binary that carries a fuse
 * wire like Electron's (sentinel, version 1, length, one byte per fuse), read back byte by byte.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUSE_SETTINGS, fuseConfig, setFuses } from '../../scripts/set-fuses.mjs';

const SENTINEL = 'dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX';
const ENABLE = 0x31; // '1'
const DISABLE = 0x30; // '0'
const WIRE = 9; // fuses in Electron's V1 wire (RunAsNode .. WasmTrapHandlers)

/** A binary-like file: junk, the fuse wire (every fuse enabled, as Electron ships RunAsNode), junk. */
function fakeElectron(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'srpo-fuses-')), 'electron');
  writeFileSync(file, Buffer.concat([Buffer.alloc(4096, 7), Buffer.from(SENTINEL), Buffer.from([1, WIRE]), Buffer.alloc(WIRE, ENABLE), Buffer.alloc(4096, 7)]));
  return file;
}

const wireOf = (file: string) => {
  const bytes = readFileSync(file);
  const at = bytes.indexOf(SENTINEL) + SENTINEL.length + 2;
  return [...bytes.subarray(at, at + WIRE)];
};

describe('Electron fuses for packaged builds', () => {
  it('are exactly: RunAsNode off, cookie encryption on, NODE_OPTIONS off, --inspect off, app only from asar', () => {
    expect(FUSE_SETTINGS).toEqual({
      RunAsNode: false,
      EnableCookieEncryption: true,
      EnableNodeOptionsEnvironmentVariable: false,
      EnableNodeCliInspectArguments: false,
      OnlyLoadAppFromAsar: true,
    });
    // Wire positions of @electron/fuses' V1 layout.
    expect(fuseConfig()).toEqual({ version: '1', 0: false, 1: true, 2: false, 3: false, 5: true });
  });

  it('setFuses flips them on the binary and leaves the other fuses alone', async () => {
    const file = fakeElectron();
    expect(wireOf(file)).toEqual(Array(WIRE).fill(ENABLE));
    await setFuses(file);
    //                       RunAsNode Cookie  NodeOpts Inspect  AsarInt OnlyAsar V8Snap  FileProt Wasm
    expect(wireOf(file)).toEqual([DISABLE, ENABLE, DISABLE, DISABLE, ENABLE, ENABLE, ENABLE, ENABLE, ENABLE]);
  });

  it('names an unknown fuse, and fails on a file without a fuse wire', async () => {
    expect(() => fuseConfig({ RunAsNodee: false })).toThrow(/unknown Electron fuse "RunAsNodee"/);
    const junk = join(mkdtempSync(join(tmpdir(), 'srpo-fuses-')), 'not-electron');
    writeFileSync(junk, Buffer.alloc(1024, 1));
    await expect(setFuses(junk)).rejects.toThrow(/sentinel/);
  });
});
