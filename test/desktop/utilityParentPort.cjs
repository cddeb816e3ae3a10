/**
 * Preloaded (`node --require`) into every engine the Electron stand-in forks
 * (electronStandIn.ts, `utilityProcess.fork`): makes a Node child look like an Electron utility
 * process from the inside. It gives the process Electron's `process.parentPort` (an EventEmitter
 * whose 'message' events carry `{ data, ports }`; messages are queued until a 'message' listener
 * is registered; `postMessage` sends) over the Node IPC channel, and takes `process.send` away,
 * so an engine that does not use parentPort cannot talk to its host at all. While parentPort has
 * no 'message' listener the channel does not keep the process alive, as in Electron. The parent
 * dying ends the child, as Electron ends utility processes with the app.
 *
 * Not part of the app; used only by test/desktop. Plain CommonJS: it runs before anything else.
 */
'use strict';
const { EventEmitter } = require('node:events');

if (typeof process.send !== 'function') throw new Error('utilityParentPort.cjs: the process has no IPC channel (fork it with one)');

const send = process.send.bind(process);
const queued = [];
const parentPort = new EventEmitter();

const deliver = (data) => parentPort.emit('message', { data, ports: [] });

process.on('message', (data) => {
  if (parentPort.listenerCount('message') > 0) deliver(data);
  else queued.push(data);
});
// Electron ends a utility process together with its parent.
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
// The listeners above must not keep the process alive by themselves: ref the channel only while
// parentPort has a 'message' listener (explicit ref/unref overrides Node's listener counting).
process.channel.unref();

parentPort.on('newListener', (event) => {
  if (event !== 'message') return;
  if (parentPort.listenerCount('message') === 0) process.channel.ref();
  // Flush after the listener is in place (newListener fires before it is added).
  setImmediate(() => {
    while (queued.length > 0 && parentPort.listenerCount('message') > 0) deliver(queued.shift());
  });
});
parentPort.on('removeListener', (event) => {
  if (event === 'message' && parentPort.listenerCount('message') === 0) process.channel.unref();
});
parentPort.postMessage = (message) => {
  send(message);
};

Object.defineProperty(process, 'parentPort', { value: parentPort, enumerable: false, configurable: false, writable: false });
// A utility process has no process.send: an engine must use parentPort.
delete process.send;
if (typeof process.send === 'function') process.send = undefined;
