/**
 * Store → dispatcher → pool → simulator → receipts → store, over real sockets and a real
 * SQLite file: what `smppd start` runs, without the HTTP layer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Acceptor } from '../../src/dispatch/accept.js';
import type { ComposeSettings } from '../../src/dispatch/compose.js';
import { Deliveries } from '../../src/dispatch/deliveries.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import type { BehaviourPatch } from '../../src/simulator/behaviour.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { makePool, until } from '../support/engine.js';

const clock = new SystemClock();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const COMPOSE: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
};

async function daemon(behaviour: BehaviourPatch = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-dispatch-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true,
    behaviour: { ...behaviour, receipts: { delayMs: { min: 0, max: 30 }, ...behaviour.receipts } },
  }, clock, silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const store = await SqliteStore.open({ path: join(dir, 'smppd.db'), clock });
  const deliveries = new Deliveries({ store, clock, log: silentLog, upstreams: [{ name: 'sim', defaultAlphabet: 'gsm7', receiptIdFormat: 'auto', smscTimeZone: 'UTC' }] });
  const pool = makePool({ port, binds: 2 }, clock, { deliver: deliveries.handle });
  const dispatcher = new Dispatcher({ store, pool, clock, log: silentLog, upstreams: [{ name: 'sim', maxInPool: 400, onUncertain: 'resend' }], pollMs: 20 });
  const acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: 100_000 });
  pool.start();
  await dispatcher.start();
  cleanups.push(async () => {
    await dispatcher.stop();
    await pool.stop(200);
    await store.close();
  });
  return { sim, store, pool, dispatcher, acceptor };
}

const send = (acceptor: Acceptor, destination: string, message = 'hello', extra: Partial<Parameters<Acceptor['send']>[0]> = {}) =>
  acceptor.send({ client: 'app', senderId: 'smppd', destination, message, messageType: 'TEXT', ...extra });

describe('dispatcher end to end', () => {
  it('sends every accepted message, long ones in parts, and receipts make each DELIVERED', async () => {
    const { sim, store, acceptor, dispatcher } = await daemon();
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push((await send(acceptor, `49151000${String(i).padStart(5, '0')}`, i % 10 === 0 ? 'z'.repeat(300) : `msg ${i}`)).messageId);
    dispatcher.wake();
    await until(async () => {
      const views = await Promise.all(ids.map((id) => store.getMessage(id)));
      return views.every((v) => v?.status === 'DELIVERED');
    }, 15_000, 'every message DELIVERED');
    expect(sim.recordedSubmits()).toHaveLength(135 + 15 * 2);
    const long = await store.getMessage(ids[0]!);
    expect(long!.parts.map((p) => p.part)).toEqual([1, 2]);
    expect(long!.parts.every((p) => p.status === 'DELIVERED' && p.smscMessageId)).toBe(true);
    expect((await store.counts()).queued).toBe(0);
  });

  it('a paused batch waits, resumes where it stopped; an aborted one fails what is left', async () => {
    const { sim, store, acceptor } = await daemon();
    const bulk = await acceptor.startBulk({ client: 'app', senderId: 'smppd', message: 'bulk', messageType: 'TEXT', schedule: { runAt: clock.wallNow() + 3_600_000, repeat: null } });
    await bulk.reserve(20);
    await bulk.add(Array.from({ length: 20 }, (_, i) => `4916000000${String(i).padStart(2, '0')}`));
    const batchId = bulk.batchId!;
    // Scheduled an hour ahead: nothing goes out.
    await new Promise((r) => setTimeout(r, 150));
    expect(sim.recordedSubmits()).toHaveLength(0);
    await store.setBatchState('app', batchId, 'paused', clock.wallNow());
    await store.setScheduleState('app', bulk.scheduleId!, 'released', clock.wallNow());
    await new Promise((r) => setTimeout(r, 150));
    expect(sim.recordedSubmits()).toHaveLength(0);
    await store.setBatchState('app', batchId, 'active', clock.wallNow());
    await until(async () => (await store.getBatch('app', batchId))?.pending === 0, 10_000, 'batch sent');
    expect(sim.recordedSubmits()).toHaveLength(20);

    const second = await acceptor.startBulk({ client: 'app', senderId: 'smppd', message: 'later', messageType: 'TEXT', schedule: { runAt: clock.wallNow() + 3_600_000, repeat: null } });
    await second.reserve(2);
    await second.add(['491700000001', '491700000002']);
    const aborted = await store.setBatchState('app', second.batchId!, 'aborted', clock.wallNow());
    expect(aborted?.state).toBe('aborted');
    const list = await store.listBatches('app');
    expect(list.find((b) => b.id === second.batchId)?.pending).toBe(0);
  });

  it('a stored message whose sender no C-Octet String carries (stored before the sender rule) is REJECTED as not sendable; the binds keep serving', async () => {
    const { sim, store, acceptor, dispatcher } = await daemon();
    // As a store written by an older smppd would hold it: the acceptor refuses such a sender now.
    const accept = store.accept.bind(store);
    store.accept = (r) => accept({ ...r, messages: r.messages.map((m) => (m.destination === '447700900001' ? { ...m, source: 'AB\u0000\u00014477' } : m)) });
    const hostile = (await send(acceptor, '447700900001')).messageId;
    const fine = (await send(acceptor, '447700900002')).messageId;
    dispatcher.wake();
    await until(async () => (await store.getMessage(hostile))?.status === 'REJECTED' && (await store.getMessage(fine))?.status === 'DELIVERED', 10_000, 'REJECTED and DELIVERED');
    expect((await store.getMessage(hostile))!.reason).toMatch(/^not sendable: cannot encode submit_sm: source_addr holds a NUL at character 3/);
    expect(sim.recordedSubmits().map((s) => s.destinationAddr)).toEqual(['447700900002']);
  });

  it('a permanent error from the SMSC makes the message REJECTED with the code as reason', async () => {
    const { store, acceptor, dispatcher } = await daemon({ submitStatus: { 0x0b: 1 } });
    const { messageId } = await send(acceptor, '4915112345678');
    dispatcher.wake();
    await until(async () => (await store.getMessage(messageId))?.status === 'REJECTED', 10_000, 'REJECTED');
    expect((await store.getMessage(messageId))!.reason).toBe('ESME_RINVDSTADR (0x0000000B)');
  });
});
