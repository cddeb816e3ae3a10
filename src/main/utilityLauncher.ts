/**
 * The desktop app's EngineLauncher: each run's engine is an Electron utility process
 * (`utilityProcess.fork`) running the engine bundle electron-vite builds next to the main bundle
 * (`out/main/engine.js`, input `engine` in electron.vite.config.ts; tsx is not there in a packaged
 * app). The engine finds `process.parentPort` and talks through it (src/engine/parentChannel.ts);
 * this side validates what arrives (utilityEngine.ts, the protocol's zod schemas).
 *
 * Only callable after app 'ready'. The handle's logic is tested with a fake child
 * (test/engine/parentChannel.test.ts); the launcher, from the built bundle, with a stand-in
 * `utilityProcess.fork` over child_process.fork (test/desktop/engines.test.ts).
 */
import { existsSync } from 'node:fs';
import { utilityProcess } from 'electron';
import type { EngineHandle, EngineLauncher, EngineLaunchRequest } from '../core/host/launcher';
import { UtilityEngineHandle } from './utilityEngine';

export interface UtilityProcessLauncherOptions {
  /** The built engine entry (CommonJS), normally `join(__dirname, 'engine.js')` from the main bundle. */
  entry: string;
  /** Extra environment for the engine (merged over process.env). */
  env?: NodeJS.ProcessEnv;
  /** 'inherit' (default): the engine's stdout/stderr go to the app's; 'pipe': kept, see `stderrTail`. */
  stdio?: 'inherit' | 'pipe';
}

export class UtilityProcessLauncher implements EngineLauncher {
  constructor(private readonly options: UtilityProcessLauncherOptions) {}

  launch(request: EngineLaunchRequest): EngineHandle & { stderrTail(): string } {
    const { entry } = this.options;
    // utilityProcess.fork of a missing file spawns and dies with little to say: say it here.
    if (!existsSync(entry)) throw new Error(`engine bundle not found: ${entry} (run \`npm run build\`)`);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...process.env, ...this.options.env })) if (v !== undefined) env[k] = v;
    // The engine must run as a utility process, not as a plain Node (which has no parentPort).
    delete env.ELECTRON_RUN_AS_NODE;
    const stdio = this.options.stdio ?? 'inherit';
    const child = utilityProcess.fork(entry, [request.dbPath, String(request.runId), request.mode], {
      serviceName: `SRPO Lab engine (run ${request.runId})`,
      env,
      stdio: ['ignore', stdio, stdio],
    });
    return new UtilityEngineHandle(child);
  }
}
