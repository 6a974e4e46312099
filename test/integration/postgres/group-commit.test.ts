/**
 * The PostgreSQL store's group commit (`write-batcher.ts`): concurrent accepts, submit outcomes
 * and receipts share transactions whose statements carry them all. What one write at a time
 * would have stored is what the batches store; a write that fails fails alone.
 */
import { expect, it } from 'vitest';
import type { PartResult } from '../../../src/store/claims.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newMessage } from '../../support/sqlite-store.js';
import { changeEvents, describePg, pgSchema, pgStorePerTest } from './pg-store.js';

const accepted = (part: number, key: string): PartResult => ({ part, kind: 'accepted', smscId: key.toUpperCase(), matchKey: key, bind: 'b1', attempts: 1 });

const receipt = (keys: string[], status: ReceiptRecord['status'], receivedAt: number): ReceiptRecord =>
  ({ upstream: 'up1', keys, status, reason: null, raw: { keys, status }, receivedAt });

const ids = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

async function acceptAndClaim(store: PostgresStore, names: string[], partCount = 1): Promise<void> {
  await store.accept({ messages: names.map((id) => newMessage(id, { partCount })), now: 1 });
  let claimed = 0;
  while (claimed < names.length) claimed += (await store.claim('up1', 10, 500)).length;
}

describePg('PostgresStore group commit', () => {
  const t = pgStorePerTest();

  // Two transactions run side by side, so requests made at once may commit in either order (as
  // concurrent HTTP requests do); within one transaction the request order is kept.
  it('single accepts made at once share transactions; each message is stored with its own time and event', async () => {
    const names = ids(300);
    const answers = await Promise.all(names.map((id, i) => t.store.accept({ messages: [newMessage(id)], now: 1_000 + i })));
    expect(answers.every((a) => a.batchId === null && a.scheduleId === null)).toBe(true);
    expect(t.store.stats.accepts.batches).toBeGreaterThan(0);
    expect(t.store.stats.accepts.batchedWrites).toBeGreaterThan(100);
    const timeOf = (id: string) => 1_000 + names.indexOf(id);
    const rows = await t.sql<{ id: string; created_at: number }>('SELECT id, created_at FROM messages ORDER BY seq');
    expect(rows.map((r) => r.id).sort()).toEqual(names);
    expect(rows.every((r) => r.created_at === timeOf(r.id))).toBe(true);
    // The batch of the 298 that queued while the first two ran keeps their order.
    const batched = rows.map((r) => r.id).filter((id) => id >= 'm0002');
    expect(batched).toEqual(names.slice(2));
    const submitted = await t.sql<{ message_id: string; created_at: number }>("SELECT message_id, created_at FROM outbox WHERE payload::json->>'status' = 'SUBMITTED' ORDER BY id");
    expect(submitted.map((e) => e.message_id).sort()).toEqual(names);
    expect(submitted.every((e) => e.created_at === timeOf(e.message_id))).toBe(true);
    const claimed = (await t.store.claim('up1', 5_000, 1_000)).map((m) => m.id);
    expect(claimed).toEqual(rows.map((r) => r.id));
  });

  it('an accept that names a message id already stored fails alone; the others of its batch are stored', async () => {
    await t.store.accept({ messages: [newMessage('taken')], now: 1 });
    const names = ids(50);
    const results = await Promise.allSettled([
      ...names.slice(0, 25).map((id) => t.store.accept({ messages: [newMessage(id)], now: 2 })),
      t.store.accept({ messages: [newMessage('taken')], now: 2 }),
      ...names.slice(25).map((id) => t.store.accept({ messages: [newMessage(id)], now: 2 })),
    ]);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(1);
    expect(results[25]?.status).toBe('rejected');
    expect(t.store.stats.accepts.splits).toBeGreaterThan(0);
    expect((await t.store.counts()).queued).toBe(51);
  });

  it('submit outcomes of many messages share transactions; one naming an unknown message fails alone', async () => {
    const names = ids(200);
    await acceptAndClaim(t.store, names);
    const results = await Promise.allSettled([
      ...names.map((id, i) => t.store.recordSubmit(id, [accepted(1, `k${i}`)], 100)),
      t.store.recordSubmit('nobody', [accepted(1, 'k-nobody')], 100),
    ]);
    expect(results.slice(0, 200).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(results[200]).toMatchObject({ status: 'rejected', reason: { code: 'INTERNAL' } });
    expect(t.store.stats.statusWrites.batches).toBeGreaterThan(0);
    const statuses = await t.sql<{ status: string; n: number }>('SELECT status, COUNT(*)::int AS n FROM messages GROUP BY status');
    expect(statuses).toEqual([{ status: 'SENT', n: 200 }]);
  });

  it('receipts in one batch: matched, parked, duplicates and second keys come out as one at a time would', async () => {
    await acceptAndClaim(t.store, ['a', 'b', 'c', 'late']);
    for (const [id, key] of [['a', 'ka'], ['b', 'kb'], ['c', 'kc']] as const) await t.store.recordSubmit(id, [accepted(1, key)], 100);
    const answers = await Promise.all([
      t.store.applyReceipt(receipt(['ka'], 'DELIVERED', 200)),
      t.store.applyReceipt(receipt(['ka'], 'DELIVERED', 201)),
      t.store.applyReceipt(receipt(['nomatch', 'kb'], 'FAILED', 202)),
      t.store.applyReceipt(receipt(['klate'], 'DELIVERED', 203)),
      t.store.applyReceipt(receipt(['kc'], 'SENT', 204)),
      t.store.applyReceipt(receipt(['kc'], 'DELIVERED', 205)),
      t.store.applyReceipt(receipt(['klate'], 'READ', 206)),
    ]);
    expect(answers).toEqual([
      { kind: 'matched', messageId: 'a', part: 1, key: 'ka', changed: true },
      { kind: 'matched', messageId: 'a', part: 1, key: 'ka', changed: false },
      { kind: 'matched', messageId: 'b', part: 1, key: 'kb', changed: true },
      { kind: 'parked' },
      { kind: 'matched', messageId: 'c', part: 1, key: 'kc', changed: false },
      { kind: 'matched', messageId: 'c', part: 1, key: 'kc', changed: true },
      { kind: 'parked' },
    ]);
    await t.store.recordSubmit('late', [accepted(1, 'klate')], 150);
    const status = async (id: string) => (await t.store.getMessage(id))?.status;
    expect([await status('a'), await status('b'), await status('c'), await status('late')]).toEqual(['DELIVERED', 'FAILED', 'DELIVERED', 'READ']);
    expect((await changeEvents(t.sql, 'late')).map((e) => e.status)).toEqual(['SENT', 'DELIVERED', 'READ']);
    expect(await t.sql('SELECT * FROM parked_receipts')).toEqual([]);
    expect(await t.sql<{ n: number }>('SELECT COUNT(*)::int AS n FROM receipts')).toEqual([{ n: 7 }]);
  });

  it('a submit batch applies the receipts parked under its keys, and a message named twice in one batch keeps its first outcome', async () => {
    await acceptAndClaim(t.store, ['x', 'y'], 2);
    await t.store.applyReceipt(receipt(['kx1'], 'DELIVERED', 50));
    await t.store.applyReceipt(receipt(['ky2'], 'DELIVERED', 51));
    await Promise.all([
      t.store.recordSubmit('x', [accepted(1, 'kx1')], 100),
      t.store.recordSubmit('x', [accepted(2, 'kx2')], 100),
      t.store.recordSubmit('y', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR', attempts: 1 }, accepted(2, 'ky2')], 100),
      t.store.recordSubmit('y', [accepted(2, 'ky2-again')], 101),
    ]);
    const x = await t.store.getMessage('x');
    const y = await t.store.getMessage('y');
    expect(x?.parts.map((p) => [p.status, p.smscMessageId])).toEqual([['DELIVERED', 'KX1'], ['SENT', 'KX2']]);
    expect(y?.parts.map((p) => [p.status, p.smscMessageId])).toEqual([['REJECTED', null], ['DELIVERED', 'KY2']]);
    expect(await t.sql('SELECT * FROM parked_receipts')).toEqual([]);
  });

  /**
   * Two lone writes take both slots; what is written meanwhile queues and goes into the next
   * transaction together (no key of it is held). Returns the queued writes' answers.
   */
  async function inOneTransaction(store: PostgresStore, busy: [string, string], writes: () => Array<Promise<unknown>>): Promise<unknown[]> {
    const before = store.stats.statusWrites;
    const lone = busy.map((id, i) => store.recordSubmit(id, [accepted(1, `busy-${i}`)], 100));
    const answers = await Promise.all(writes());
    await Promise.all(lone);
    const after = store.stats.statusWrites;
    expect(after.batches - before.batches).toBe(1);
    expect(after.batchedWrites - before.batchedWrites).toBe(answers.length);
    return answers;
  }

  const parkingNeverUsed = async () => expect(await t.sql<{ is_called: boolean }>('SELECT is_called FROM parked_receipts_id_seq')).toEqual([{ is_called: false }]);

  it('an outcome and its receipt in one transaction: matched at once, or (the receipt first) applied by the outcome without being parked', async () => {
    await acceptAndClaim(t.store, ['x', 'y', 'busy-x', 'busy-y']);
    const answers = await inOneTransaction(t.store, ['busy-x', 'busy-y'], () => [
      t.store.recordSubmit('x', [accepted(1, 'kx')], 100),
      t.store.applyReceipt(receipt(['kx'], 'DELIVERED', 150)),
      t.store.applyReceipt(receipt(['ky'], 'DELIVERED', 90)),
      t.store.recordSubmit('y', [accepted(1, 'ky')], 100),
      t.store.applyReceipt(receipt(['kx'], 'DELIVERED', 160)),
    ]);
    expect(answers).toEqual([
      undefined,
      { kind: 'matched', messageId: 'x', part: 1, key: 'kx', changed: true },
      { kind: 'parked' },
      undefined,
      { kind: 'matched', messageId: 'x', part: 1, key: 'kx', changed: false },
    ]);
    for (const id of ['x', 'y']) {
      expect((await changeEvents(t.sql, id)).map((e) => e.status)).toEqual(['SENT', 'DELIVERED']);
      expect((await t.store.getMessage(id))?.status).toBe('DELIVERED');
    }
    // DELIVERED dated by its receipt, never before SENT: y's receipt came first, so at the outcome's time.
    const updated = await t.sql<{ id: string; updated_at: number }>("SELECT id, updated_at FROM messages WHERE id IN ('x', 'y') ORDER BY id");
    expect(updated).toEqual([{ id: 'x', updated_at: 150 }, { id: 'y', updated_at: 100 }]);
    expect(await t.sql<{ message_id: string; changed: number }>('SELECT message_id, changed FROM receipts ORDER BY id')).toEqual([
      { message_id: 'x', changed: 1 }, { message_id: 'y', changed: 1 }, { message_id: 'x', changed: 0 },
    ]);
    await parkingNeverUsed();
  });

  it('in one transaction a receipt finds the part of its first key that any part has, the latest message\'s when two have it', async () => {
    await acceptAndClaim(t.store, ['old', 'a', 'c', 'new', 'b', 'd', 'busy-x', 'busy-y']);
    for (const [id, key] of [['old', 'k'], ['a', 'k2'], ['c', 'k3']] as const) await t.store.recordSubmit(id, [accepted(1, key)], 100);
    const answers = await inOneTransaction(t.store, ['busy-x', 'busy-y'], () => [
      t.store.recordSubmit('new', [accepted(1, 'k')], 200),
      t.store.recordSubmit('b', [accepted(1, 'k1')], 200),
      t.store.recordSubmit('d', [accepted(1, 'k4')], 200),
      t.store.applyReceipt(receipt(['k'], 'DELIVERED', 300)),
      t.store.applyReceipt(receipt(['k1', 'k2'], 'DELIVERED', 300)),
      t.store.applyReceipt(receipt(['k3', 'k4'], 'DELIVERED', 300)),
    ]);
    expect(answers.slice(3)).toEqual([
      { kind: 'matched', messageId: 'new', part: 1, key: 'k', changed: true },
      { kind: 'matched', messageId: 'b', part: 1, key: 'k1', changed: true },
      { kind: 'matched', messageId: 'c', part: 1, key: 'k3', changed: true },
    ]);
    await parkingNeverUsed();
  });

  it('receipts racing their submit outcomes, on two instances: every message DELIVERED once, nothing left parked', async () => {
    const schema = await pgSchema();
    try {
      const a = await schema.open({ instanceId: 'host-a', poolSize: 6 });
      const b = await schema.open({ instanceId: 'host-b', poolSize: 6 });
      const names = ids(400);
      await acceptAndClaim(a, names, 2);
      // Outcomes on a, receipts on b, interleaved so batches of both kinds overlap in every order.
      const writes: Array<Promise<unknown>> = [];
      names.forEach((id, i) => {
        const keys = [`${id}-1`, `${id}-2`];
        const submit = () => a.recordSubmit(id, [accepted(1, keys[0]!), accepted(2, keys[1]!)], 100);
        const receipts = () => keys.map((k) => b.applyReceipt(receipt([k], 'DELIVERED', 200)));
        if (i % 2 === 0) writes.push(submit(), ...receipts());
        else writes.push(...receipts(), submit());
      });
      await Promise.all(writes);
      const statuses = await schema.sql<{ status: string; n: number }>('SELECT status, COUNT(*)::int AS n FROM messages GROUP BY status');
      expect(statuses).toEqual([{ status: 'DELIVERED', n: 400 }]);
      expect(await schema.sql('SELECT * FROM parked_receipts')).toEqual([]);
      const perPart = await schema.sql<{ n: number }>('SELECT COUNT(*)::int AS n FROM receipts GROUP BY message_id, part HAVING COUNT(*) <> 1');
      expect(perPart).toEqual([]);
      const delivered = await changeEvents(schema.sql);
      expect(delivered.filter((e) => e.status === 'DELIVERED')).toHaveLength(400);
      expect(a.stats.statusWrites.batches + b.stats.statusWrites.batches).toBeGreaterThan(0);
    } finally {
      await schema.cleanup();
    }
  });
});
