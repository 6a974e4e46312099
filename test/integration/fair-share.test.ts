/**
 * Fair sharing of the binds between clients, against the simulator over a real socket, on each
 * store (PostgreSQL with SMPPD_TEST_PG_URL): a client's single send is not queued behind another
 * client's bulk of 100,000, clients that both have work are served by weight, and finding the
 * sends of many clients never hands the pool more than its room.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Acceptor } from '../../src/dispatch/accept.js';
import type { ComposeSettings } from '../../src/dispatch/compose.js';
import { Dispatcher, type ClientWeight } from '../../src/dispatch/dispatcher.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { makePool, until } from '../support/engine.js';
import { recordingLog } from '../support/http.js';
import { PG_URL, pgSchema } from './postgres/pg-store.js';

const clock = new SystemClock();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// No receipts: what is measured is the order of submit_sm at the SMSC.
const COMPOSE: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: false,
};
/** One bind at 1,000 submit_sm a second, a window of 100; the pool holds twice the window. */
const WINDOW = 100;
const MAX_IN_POOL = 2 * WINDOW;

const stores: Array<[string, () => Promise<Store>]> = [
  ['SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smppd-fair-'));
    const store = await SqliteStore.open({ path: join(dir, 'smppd.db'), clock });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return store;
  }],
  ...(PG_URL === undefined ? [] : [['PostgreSQL', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    return schema.open({ instanceId: 'fair' });
  }] as [string, () => Promise<Store>]]),
];

/** `poolQueue`: the pool's own queue limit (it refuses a message past it); `logs`: the dispatcher's lines. */
async function rig(openStore: () => Promise<Store>, clients: ClientWeight[], o: { poolQueue?: number; logs?: string[] } = {}) {
  const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true }, clock, silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const store = await openStore();
  const pool = makePool({ port, binds: 1, window: WINDOW, ratePerBind: 1_000, ...(o.poolQueue !== undefined ? { maxQueued: o.poolQueue } : {}) }, clock);
  const log = o.logs ? recordingLog(o.logs) : silentLog;
  const dispatcher = new Dispatcher({ store, pool, clock, log, upstreams: [{ name: 'sim', maxInPool: MAX_IN_POOL, onUncertain: 'resend' }], pollMs: 50, clients });
  const acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: 1_000_000, onAccepted: () => dispatcher.wake() });
  cleanups.push(async () => {
    await dispatcher.stop();
    await pool.stop(500);
    await store.close();
  });
  /** Stores `n` numbers of `client` as one bulk job, sent as `senderId`. */
  const bulk = async (client: string, senderId: string, n: number, first: number): Promise<void> => {
    const writer = await acceptor.startBulk({ client, senderId, message: 'bulk', messageType: 'TEXT' });
    await writer.reserve(n);
    for (let i = 0; i < n; i += 1_000) {
      await writer.add(Array.from({ length: Math.min(1_000, n - i) }, (_, j) => String(first + i + j)));
    }
    writer.close();
  };
  const start = async (): Promise<void> => {
    pool.start();
    await dispatcher.start();
  };
  return { sim, store, acceptor, bulk, start };
}

describe.each(stores)('fair sharing between clients (%s store)', (_name, openStore) => {
  it('a single send of one client reaches the SMSC behind at most the pool\'s worth of another client\'s queued bulk of 100,000', async () => {
    const { sim, store, acceptor, bulk, start } = await rig(openStore, [{ name: 'bulky', weight: 1 }, { name: 'single', weight: 1 }]);
    // Stored before the binds start: on a loaded machine, storing 100,000 rows can take longer
    // than sending 20,000 of them, and the test needs the bulk mostly queued.
    await bulk('bulky', 'Bulk', 100_000, 447_000_000_000);
    await start();
    // The bulk is being sent, with most of it still queued.
    await until(() => sim.recordedSubmits().length >= 1_000, 15_000, 'the bulk under way');
    expect((await store.queueDepth()).queued).toBeGreaterThan(80_000);

    await acceptor.send({ client: 'single', senderId: 'Single', destination: '448000000001', message: 'just one', messageType: 'TEXT' });
    // Counted from its commit: the bound says nothing of how long the accept itself took (on a
    // loaded machine, tens of the bulk's messages go out while it commits).
    const before = sim.recordedSubmits().length;
    await until(() => sim.recordedSubmits().some((s) => s.sourceAddr === 'Single'), 10_000, 'the single send at the SMSC');
    const submits = sim.recordedSubmits();
    const at = submits.findIndex((s) => s.sourceAddr === 'Single');
    // Ahead of it after its commit: what the pool held (MAX_IN_POOL), and the claim under way
    // when it was stored; never the queue. At 1,000/s: well under a second.
    expect(at - before).toBeLessThanOrEqual(2 * MAX_IN_POOL);
    expect((await store.queueDepth()).queued).toBeGreaterThan(70_000);
  }, 120_000);

  it('50 clients\' single sends during another\'s bulk: each claim stays within the pool\'s room, none is refused', async () => {
    const singles = Array.from({ length: 50 }, (_, i) => `single${String(i).padStart(2, '0')}`);
    const logs: string[] = [];
    // The pool takes exactly what the dispatcher may hand it (MAX_IN_POOL): a claim past its room is refused.
    const { sim, bulk, acceptor, start } = await rig(openStore, [{ name: 'bulky', weight: 1 }, ...singles.map((name) => ({ name, weight: 1 }))], { poolQueue: MAX_IN_POOL, logs });
    await start();
    await bulk('bulky', 'Bulk', 20_000, 447_000_000_000);
    await until(() => sim.recordedSubmits().length >= 1_000, 15_000, 'the bulk under way');
    // Each of the 50 sends one message at once; they are found by the claims that follow.
    await Promise.all(singles.map((client, i) => acceptor.send({ client, senderId: 'Single', destination: String(448_000_000_000 + i), message: 'one', messageType: 'TEXT' })));
    await until(() => sim.recordedSubmits().filter((s) => s.sourceAddr === 'Single').length === singles.length, 20_000, 'the 50 single sends at the SMSC');
    expect(logs.filter((l) => l.includes('"submit_refused"')).length, 'messages the pool refused').toBe(0);
  }, 120_000);

  it('clients that both have work are served by weight: 3 to 1', async () => {
    const { sim, bulk, start } = await rig(openStore, [{ name: 'heavy', weight: 3 }, { name: 'light', weight: 1 }]);
    await bulk('heavy', 'Heavy', 3_000, 447_000_000_000);
    await bulk('light', 'Light', 3_000, 448_000_000_000);
    await start();
    await until(() => sim.recordedSubmits().length >= 2_000, 20_000, '2,000 submits');
    const first = sim.recordedSubmits().slice(0, 2_000);
    const heavy = first.filter((s) => s.sourceAddr === 'Heavy').length;
    const light = first.filter((s) => s.sourceAddr === 'Light').length;
    expect(heavy + light).toBe(2_000);
    expect(heavy / light).toBeGreaterThan(2.7);
    expect(heavy / light).toBeLessThan(3.3);
    // And in every stretch of 400: neither waits for the other's backlog.
    for (let i = 0; i < 2_000; i += 400) {
      const light400 = first.slice(i, i + 400).filter((s) => s.sourceAddr === 'Light').length;
      expect(light400).toBeGreaterThan(70);
      expect(light400).toBeLessThan(130);
    }
  }, 120_000);
});
