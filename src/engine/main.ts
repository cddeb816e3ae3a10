/**
 * The engine process entry: `DB_PATH RUN_ID start|resume`, one run per process, started by a
 * launcher: `node --import tsx src/engine/main.ts ...` (NodeForkLauncher, src/core/host/launcher.ts:
 * CLI, web mode, tests) or, bundled by electron-vite as `out/main/engine.js`, an Electron utility
 * process (src/main/utilityLauncher.ts). Both transports sit behind `parentChannel()`
 * (parentChannel.ts: `process.parentPort` or `process.send`).
 * Wires the process to runEngine: host messages (validated), SIGINT/SIGTERM and a lost host
 * (IPC disconnect) become stop requests; exit code 0 for completed or stopped, 1 for failed.
 *
 * Not the loop (runEngine.ts). Tested by test/engine/*.test.ts through NodeForkLauncher.
 */
import { parseHostMessage, type EngineMessage } from '../core/host/messages';
import { runDirFor, stopFlagPath } from '../core/host/paths';
import { EngineControl } from './control';
import { parentChannel } from './parentChannel';
import { runEngine } from './runEngine';

function usage(msg: string): never {
  console.error(`srpo-lab engine: ${msg}\nusage: main.ts DB_PATH RUN_ID start|resume`);
  process.exit(2);
}

const channel = parentChannel();

/** Sends not yet flushed to the channel: awaited before letting go of it, so the last status arrives. */
const pending = new Set<Promise<unknown>>();

async function main(): Promise<number> {
  const [dbPath, runIdArg, mode] = process.argv.slice(2);
  const runId = Number(runIdArg);
  if (!dbPath || !Number.isInteger(runId) || (mode !== 'start' && mode !== 'resume')) usage(`bad arguments: ${process.argv.slice(2).join(' ')}`);

  const send = (msg: EngineMessage): void => {
    if (channel.connected()) {
      const done = channel.send(msg);
      pending.add(done);
      void done.then(() => pending.delete(done));
    } else if (msg.type === 'log' || msg.type === 'status')
      console.error(`[engine run ${runId}] ${msg.type === 'log' ? msg.line : `status ${msg.status}${msg.error ? `: ${msg.error}` : ''}`}`);
  };
  const control = new EngineControl(stopFlagPath(runDirFor(dbPath, runId)));
  channel.onMessage((raw) => {
    try {
      const msg = parseHostMessage(raw);
      if (msg.type === 'pause') control.pause();
      else if (msg.type === 'resume') control.resume();
      else control.stop('host request');
    } catch (err) {
      send({ type: 'log', level: 'error', line: (err as Error).message });
    }
  });
  process.on('SIGINT', () => control.stop('SIGINT'));
  process.on('SIGTERM', () => control.stop('SIGTERM'));
  // The host went away: finish cleanly rather than train with nobody listening.
  channel.onDisconnect(() => control.stop('host disconnected'));

  const result = await runEngine({ dbPath, runId, mode }, send, control);
  await Promise.all(pending);
  return result.status === 'failed' ? 1 : 0;
}

void main().then(
  (code) => {
    // An open channel would keep the process alive; every message has been flushed.
    channel.close();
    process.exitCode = code;
    if (channel.transport === 'utility') {
      // Nothing else should hold the loop; if something does (a native handle), do not linger.
      setTimeout(() => process.exit(code), 2000).unref();
    }
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
