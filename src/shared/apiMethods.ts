/**
 * The names of every LabApi method and the push channel, with no imports at all: the sandboxed
 * Electron preload bundles this file (it cannot `require('zod')`), and api.ts builds the typed
 * contract on it. Adding a method: a name here, a schema + output type in api.ts, an
 * implementation in src/core/host/labService.ts. Tested through test/server/server.test.ts.
 */
export const API_METHODS = [
  'listRuns',
  'getRun',
  'deleteRun',
  'presets',
  'configSchema',
  'validateConfig',
  'createRun',
  'startRun',
  'resumeRun',
  'pauseRun',
  'stopRun',
  'metricKeys',
  'metricSeries',
  'evaluations',
  'listEvents',
  'getEvent',
  'getEpisode',
  'exportReport',
  'listSuites',
  'getSuite',
  'createSuite',
  'startSuite',
] as const;

export type ApiMethod = (typeof API_METHODS)[number];

/** IPC channel of a method (`lab:listRuns`) and of the pushes. */
export const ipcChannel = (method: ApiMethod): string => `lab:${method}`;
export const PUSH_CHANNEL = 'lab:push';
