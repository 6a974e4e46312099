/**
 * The worker thread that runs the SQLite store for `SqliteWorkerStore`: it opens the file,
 * runs each call on its `SqliteStore` (whose group commit batches them as in one thread), and
 * answers in batches. SQLite's CPU then runs on the machine's other core, beside the daemon's
 * HTTP, SMPP and receipt work.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SystemClock } from '../../core/clock.js';
import type { Store } from '../store.js';
import { SqliteStore } from './sqlite-store.js';
import { reviveArgs, toWireError, type FromWorker, type StoreCall, type StoreReply, type ToWorker, type WorkerStoreOptions } from './worker-protocol.js';

if (!parentPort) throw new Error('store-worker runs as a worker thread');
const port = parentPort;
const post = (message: FromWorker): void => port.postMessage(message);

let replies: StoreReply[] = [];
let flushScheduled = false;

function reply(r: StoreReply): void {
  replies.push(r);
  if (flushScheduled) return;
  flushScheduled = true;
  // Every write of one group commit resolves in the same turn: one message carries them all.
  setImmediate(() => {
    flushScheduled = false;
    const batch = replies;
    replies = [];
    post({ kind: 'replies', replies: batch });
  });
}

function run(store: Store, call: StoreCall): void {
  let pending: Promise<unknown>;
  try {
    pending = (store[call.method] as (...a: unknown[]) => Promise<unknown>).apply(store, reviveArgs(call.method, call.args));
  } catch (e) {
    pending = Promise.reject(e);
  }
  pending.then(
    (value) => reply({ id: call.id, ok: true, value }),
    (e: unknown) => reply({ id: call.id, ok: false, error: toWireError(e) }),
  );
}

async function serve(): Promise<void> {
  let store: SqliteStore;
  try {
    store = await SqliteStore.open({ ...(workerData as WorkerStoreOptions), clock: new SystemClock() });
  } catch (e) {
    post({ kind: 'open-failed', error: toWireError(e) });
    port.close();
    return;
  }
  port.on('message', (message: ToWorker) => {
    if (message.kind === 'calls') {
      for (const call of message.calls) run(store, call);
      return;
    }
    // close: the store commits what is queued (their replies are queued first), then 'closed'.
    void store.close().then(() => setImmediate(() => {
      post({ kind: 'closed' });
      port.close();
    }));
  });
  post({ kind: 'ready' });
}

void serve();
