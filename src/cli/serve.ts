/**
 * `srpo-lab serve [--port N] [--db PATH] [--allow DIR ...]`: web mode. Opens the lab database in a LabService that
 * runs in a worker thread (LabWorkerClient: its synchronous SQLite reads never stall the HTTP
 * server or the sockets; engines are still forked from this thread with NodeForkLauncher), serves
 * the built renderer and the API on 127.0.0.1 (src/server/server.ts), prints the URL with its
 * one-time token, and runs until Ctrl-C, which stops the engines it started (they end 'stopped',
 * resumable) and closes the server.
 *
 * Every file path a web client names (datasets, corpora, `policies.init`) must lie under the
 * folders allowed here (`--allow`, repeatable; default: the database's folder and the lab's
 * resources/), symlinks resolved (src/core/host/pathRoots.ts); the desktop app and the CLI's
 * other commands keep any path.
 *
 * Needs `npm run build` for the pages (the API works without). Tests: test/server/server.test.ts
 * (startLabServer), test/e2e/lab.test.ts.
 */
import { resolve } from 'node:path';
import { LabWorkerClient } from '../core/host/labWorkerClient';
import { PathRoots } from '../core/host/pathRoots';
import { chromiumPdfPrinter } from '../server/pdf';
import { startLabServer } from '../server/server';
import type { ParsedArgs } from './args';
import type { CliIO } from './io';

export async function serveCommand(args: ParsedArgs, out: (line: string) => void, io: CliIO): Promise<void> {
  const dbPath = resolve(args.options.db ?? 'lab.db');
  const port = args.options.port === undefined ? 0 : Number(args.options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port "${args.options.port}" is not a port number (0..65535; 0 picks a free one)`);
  // Checked here, so a folder that is not there is named before anything starts.
  const roots = new PathRoots(args.lists.allow?.length ? args.lists.allow : PathRoots.defaults(dbPath));
  // One headless Chromium shared by every PDF export of this session, closed on the way out.
  const printer = chromiumPdfPrinter();
  const service = new LabWorkerClient({ dbPath, launcher: io.launcher, printPdf: printer ?? undefined, pathRoots: roots.dirs });
  try {
    await service.ready;
  } catch (err) {
    await service.close();
    await printer?.close();
    throw err;
  }
  const server = await startLabServer({ service, port });
  out(`SRPO Lab (web mode) on ${dbPath}`);
  out(`open: ${server.url}`);
  out('only this machine can connect (127.0.0.1), and only with the token above; Ctrl-C stops');
  out(`clients may name files only under: ${roots.dirs.join(', ')} (add folders with --allow DIR)`);
  await new Promise<void>((done) => {
    const dispose = io.onInterrupt(() => {
      dispose();
      done();
    });
  });
  out('stopping: engines of this session stop after their current step');
  await server.close();
  await service.close();
  await printer?.close();
}
