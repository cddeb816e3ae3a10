/**
 * The engine's line to its host, whichever launcher started it: an Electron utility process
 * (`process.parentPort`: messages arrive as `{ data }` events, `postMessage` sends) or a Node
 * child_process fork (`process.send` / `process.on('message')`, the IPC channel). main.ts talks
 * only to this, so the engine entry is the same file for both transports. With neither (the entry
 * run by hand) sends are dropped and main.ts prints logs and statuses to stderr instead.
 *
 * Structural types only: no `electron` import (the engine runs under plain Node in tests and the
 * CLI). Tested by test/engine/parentChannel.test.ts with fake ports; the Node path also end to end
 * by test/engine/*.test.ts.
 */

/** The part of Electron's `process.parentPort` (a utility process) the engine uses. */
export interface ParentPortLike {
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  off(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  postMessage(message: unknown): void;
}

/** The part of a Node process (forked with an IPC channel) the engine uses. */
export interface NodeProcessLike {
  send?: (message: unknown, sendHandle: undefined, options: object, callback: (error: Error | null) => void) => boolean;
  connected?: boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  disconnect?: () => void;
  parentPort?: ParentPortLike | null;
}

export type ParentTransport = 'utility' | 'node-ipc' | 'none';

export interface ParentChannel {
  readonly transport: ParentTransport;
  /** True while a host can receive (utility: until close; node: while the IPC channel is connected). */
  connected(): boolean;
  /**
   * Sends one message; resolves once the channel has taken it (node: written to the IPC pipe, so
   * awaiting every send before exiting loses none). Never rejects; false when nothing was sent.
   */
  send(message: unknown): Promise<boolean>;
  /** Every message from the host (raw: the caller validates it). */
  onMessage(listener: (raw: unknown) => void): void;
  /**
   * The host went away. Node: the IPC channel closed. Utility: never fires (Electron ends a
   * utility process together with its parent).
   */
  onDisconnect(listener: () => void): void;
  /** Stops listening and lets go of the channel, so it no longer keeps the process alive. */
  close(): void;
}

/** Picks the transport of `proc` (default: this process): parentPort first, then process.send. */
export function parentChannel(proc: NodeProcessLike = process as unknown as NodeProcessLike): ParentChannel {
  const port = proc.parentPort;
  if (port && typeof port.postMessage === 'function') return utilityChannel(port);
  if (typeof proc.send === 'function') return nodeChannel(proc);
  return noChannel();
}

function utilityChannel(port: ParentPortLike): ParentChannel {
  const listeners: ((raw: unknown) => void)[] = [];
  let open = true;
  let attached = false;
  // One listener on the port: registering it starts the port (queued messages are delivered) and
  // keeps the process alive; removing it in close() pauses the port again.
  const onPortMessage = (event: { data: unknown }): void => {
    const data = event && typeof event === 'object' && 'data' in event ? event.data : event;
    for (const l of listeners) l(data);
  };
  return {
    transport: 'utility',
    connected: () => open,
    send(message) {
      if (!open) return Promise.resolve(false);
      try {
        // Structured clone, handed to the port synchronously.
        port.postMessage(message);
        return Promise.resolve(true);
      } catch {
        return Promise.resolve(false);
      }
    },
    onMessage(listener) {
      listeners.push(listener);
      if (!attached && open) {
        attached = true;
        port.on('message', onPortMessage);
      }
    },
    onDisconnect() {
      // Electron ends a utility process with its parent; there is no disconnect event to relay.
    },
    close() {
      if (!open) return;
      open = false;
      if (attached) port.off('message', onPortMessage);
      attached = false;
    },
  };
}

function nodeChannel(proc: NodeProcessLike): ParentChannel {
  const listeners: ((raw: unknown) => void)[] = [];
  let attached = false;
  const onProcMessage = (raw: unknown): void => {
    for (const l of listeners) l(raw);
  };
  return {
    transport: 'node-ipc',
    connected: () => proc.connected === true,
    send(message) {
      if (!proc.send || proc.connected !== true) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        try {
          proc.send!(message, undefined, {}, (err) => resolve(!err));
        } catch {
          // The channel closed between the check and the write.
          resolve(false);
        }
      });
    },
    onMessage(listener) {
      listeners.push(listener);
      if (!attached) {
        attached = true;
        proc.on('message', onProcMessage);
      }
    },
    onDisconnect(listener) {
      proc.on('disconnect', listener);
    },
    close() {
      if (attached) proc.off('message', onProcMessage);
      attached = false;
      // The open IPC channel would keep the process alive.
      if (proc.connected === true) proc.disconnect?.();
    },
  };
}

function noChannel(): ParentChannel {
  return {
    transport: 'none',
    connected: () => false,
    send: () => Promise.resolve(false),
    onMessage() {},
    onDisconnect() {},
    close() {},
  };
}
