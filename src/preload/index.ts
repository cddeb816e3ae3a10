/**
 * Preload (sandboxed, CommonJS): exposes the lab API to the renderer through contextBridge as
 * `window.lab`: one function per LabApi method (each invokes its own IPC channel, `lab:<method>`,
 * and resolves with the ApiResult main sends back) plus `subscribe(listener)` for pushes, which
 * returns a disposer. Nothing else: no generic send, no ipcRenderer. Imports only the zod-free
 * method list (a sandboxed preload cannot require packages). The built bundle is run with a
 * sandboxed preload's require by test/desktop/window.test.ts; the renderer side is
 * src/renderer/src/api/client.ts.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { API_METHODS, ipcChannel, PUSH_CHANNEL } from '../shared/apiMethods';

const methods = Object.fromEntries(API_METHODS.map((m) => [m, (input: unknown) => ipcRenderer.invoke(ipcChannel(m), input)]));

contextBridge.exposeInMainWorld('lab', {
  ...methods,
  transport: 'ipc',
  subscribe(listener: (push: unknown) => void): () => void {
    const handler = (_e: IpcRendererEvent, push: unknown) => listener(push);
    ipcRenderer.on(PUSH_CHANNEL, handler);
    return () => void ipcRenderer.removeListener(PUSH_CHANNEL, handler);
  },
});
