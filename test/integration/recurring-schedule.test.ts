/**
 * A recurring sendSms end to end: the API's mapping, the store, the dispatcher's releaseDue and
 * claims, the binds, the simulator over real sockets. The wall clock is set by the test (timers
 * are real): the SMSC receives the message at 09:00 London time on both sides of the night the
 * clocks go forward, and nothing before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendRequestFrom } from '../../src/api/send-request.js';
import { parseInput, sendSmsSchema } from '../../src/api/validation.js';
import { silentLog } from '../../src/core/log.js';
import { Acceptor } from '../../src/dispatch/accept.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makePool, until } from '../support/engine.js';
import { COMPOSE } from '../support/http.js';
import { WallClockAt } from '../support/store-conformance/harness.js';

const HOUR = 3_600_000;
/** 09:00 in London on 28 March 2026 (GMT); 09:00 BST on the 29th is 08:00Z. */
const FIRST = Date.UTC(2026, 2, 28, 9);
const SECOND = FIRST + 23 * HOUR;

const clock = new WallClockAt(FIRST - HOUR);
const cleanups: Array<() => Promise<void> | void> = [];
let sim: SmscSimulator;
let store: SqliteStore;
let acceptor: Acceptor;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-recurring-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true }, clock, silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  store = await SqliteStore.open({ path: join(dir, 'smppd.db'), clock });
  const pool = makePool({ port }, clock);
  const dispatcher = new Dispatcher({ store, pool, clock, log: silentLog, upstreams: [{ name: 'sim', maxInPool: 100, onUncertain: 'resend' }], pollMs: 20 });
  acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: 1_000 });
  pool.start();
  await dispatcher.start();
  cleanups.push(async () => {
    await dispatcher.stop();
    await pool.stop(200);
    await store.close();
  });
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const received = () => sim.recordedSubmits().map((s) => [s.destinationAddr, s.shortMessage.toString('latin1')]);

it('the SMSC receives a DAILY send at 09:00 London time before and after the clocks go forward', async () => {
  const body = parseInput(sendSmsSchema, {
    senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Good morning', messageType: 'TEXT',
    isSchedule: true, time: '2026-03-28 09:00', gmt: 'Europe/London', repeat: 'DAILY',
  });
  const { messageId } = await acceptor.send(sendRequestFrom('app', body, clock.wallNow()));

  // A minute before each run the store has nothing due, and the SMSC has seen nothing new.
  clock.wall = FIRST - 60_000;
  expect(await store.releaseDue(clock.wall)).toBe(0);
  expect(received()).toEqual([]);
  clock.wall = FIRST;
  await until(() => received().length === 1, 5_000, 'the first run at the SMSC');
  expect(received()).toEqual([['447700900123', 'Good morning']]);
  const [next] = await store.listSchedules('app');
  expect(next).toMatchObject({ state: 'scheduled', runAt: SECOND, runs: 1 });

  clock.wall = SECOND - 60_000;
  expect(await store.releaseDue(clock.wall)).toBe(0);
  clock.wall = SECOND;
  await until(() => received().length === 2, 5_000, 'the second run at the SMSC');
  expect(received()[1]).toEqual(['447700900123', 'Good morning']);
  // Each run is a batch of its own, with a message of its own.
  expect((await store.getMessage(messageId))?.batchId).not.toBe(next!.batchId);
  expect((await store.listSchedules('app'))[0]).toMatchObject({ runAt: SECOND + 24 * HOUR, runs: 2, lastRunAt: SECOND });
  expect((await store.listBatches('app')).map((b) => b.total)).toEqual([1, 1, 1]);
});
