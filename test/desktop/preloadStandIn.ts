/**
 * The renderer side of the stand-in Electron (electronStandIn.ts), one per window: runs the
 * window's preload the way a sandboxed Electron preload runs (a `require` that knows `electron`,
 * `events`, `timers` and `url` only; anything else throws `module not found`), with
 * `contextBridge.exposeInMainWorld` (needs contextIsolation; a key once; functions proxied,
 * values cloned) and `ipcRenderer` (invoke / on / removeListener / off, structured clone both
 * ways) bound to that window. The page itself is not run: tests play it through `mainWorld`.
 *
 * Not Electron's renderer: no Chromium, no DOM, no real isolation of worlds. Used by test/desktop only.
 */
import * as events from 'node:events';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import * as timers from 'node:timers';
import * as url from 'node:url';
import { compileFunction } from 'node:vm';
import type { StandInIpcMain, StandInWebContents } from './electronStandIn';

/** The bridged API a preload exposed, as the page would see it. */
export type MainWorld = Record<string, unknown>;

/** A window's renderer: its preload run, what it exposed, its IPC listeners. */
export class StandInRenderer {
  readonly mainWorld: MainWorld = {};
  /** Every module the preload asked `require` for. */
  readonly required: string[] = [];
  private readonly listeners = new Map<string, Set<(...args: unknown[]) => void>>();

  constructor(
    private readonly contents: StandInWebContents,
    private readonly ipcMain: StandInIpcMain,
  ) {}

  run(preloadPath: string): void {
    const code = readFileSync(preloadPath, 'utf8');
    const electron = { contextBridge: this.contextBridge(), ipcRenderer: this.ipcRenderer() };
    const sandboxed = this.contents.webPreferences.sandbox !== false;
    const allowed: Record<string, unknown> = { electron, events, timers, url };
    const preloadRequire = (id: string): unknown => {
      this.required.push(id);
      if (id in allowed) return allowed[id];
      if (sandboxed) throw new Error(`module not found: ${id}`);
      return createRequire(preloadPath)(id);
    };
    const module = { exports: {} as unknown };
    const fn = compileFunction(code, ['require', 'module', 'exports', '__filename', '__dirname'], { filename: preloadPath });
    fn(preloadRequire, module, module.exports, preloadPath, resolve(preloadPath, '..'));
  }

  /** A push arriving from the main process. */
  deliver(channel: string, args: unknown[]): void {
    const event = { sender: null, senderId: 0, ports: [] };
    for (const l of [...(this.listeners.get(channel) ?? [])]) l(event, ...args);
  }

  listenerCount(channel: string): number {
    return this.listeners.get(channel)?.size ?? 0;
  }

  private contextBridge() {
    const world = this.mainWorld;
    const isolated = this.contents.webPreferences.contextIsolation !== false;
    return {
      exposeInMainWorld(key: string, api: unknown): void {
        if (!isolated) throw new Error('contextBridge API can only be used when contextIsolation is enabled');
        if (key in world) throw new Error('Cannot bind an API on top of an existing property on the window object');
        world[key] = bridge(api);
      },
    };
  }

  private ipcRenderer() {
    const listeners = this.listeners;
    const contents = this.contents;
    const ipcMain = this.ipcMain;
    return {
      invoke(channel: string, ...args: unknown[]): Promise<unknown> {
        return ipcMain.invoke(channel, contents.destroyed ? null : contents.url, args, contents);
      },
      on(channel: string, listener: (...args: unknown[]) => void) {
        if (!listeners.has(channel)) listeners.set(channel, new Set());
        listeners.get(channel)!.add(listener);
        return this;
      },
      removeListener(channel: string, listener: (...args: unknown[]) => void) {
        listeners.get(channel)?.delete(listener);
        return this;
      },
      off(channel: string, listener: (...args: unknown[]) => void) {
        listeners.get(channel)?.delete(listener);
        return this;
      },
    };
  }
}

/**
 * What crosses contextBridge: objects copied key by key, functions proxied (their arguments and
 * results crossing back the same way), promises resolved then copied, other values cloned.
 */
function bridge(value: unknown): unknown {
  if (typeof value === 'function') return (...args: unknown[]) => bridge((value as (...a: unknown[]) => unknown)(...args.map(bridge)));
  if (value instanceof Promise) return value.then(bridge);
  if (value && typeof value === 'object') {
    if (Array.isArray(value)) return value.map(bridge);
    const proto = Object.getPrototypeOf(value);
    if (proto === Object.prototype || proto === null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, bridge(v)]));
    return structuredClone(value);
  }
  return value;
}
