/**
 * Preload (sandboxed, CommonJS): exposes the lab API to the renderer through contextBridge, one
 * function per API method and nothing else. The API contract arrives with the UI issue; until
 * then only the platform facts the shell shows are exposed.
 */
import { contextBridge } from 'electron';

contextBridge.exposeInMainWorld('lab', {
  transport: 'ipc',
  versions: { electron: process.versions.electron, chrome: process.versions.chrome, node: process.versions.node },
});
