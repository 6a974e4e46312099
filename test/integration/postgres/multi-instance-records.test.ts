/**
 * Two PostgresStore instances on one schema taking one queue of message records: each record goes
 * to one instance while that instance holds it, and to another once its lease has run out.
 */
import { expect, it } from 'vitest';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const NOW = 10_000;
const LEASE = 60_000;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);

describePg('PostgresStore shared by two instances: message records', () => {
  const t = pgInstancesPerTest({ records: true, leaseMs: LEASE });

  /** Messages accepted and claimed through A, then REJECTED half through A and half through B: one record each. */
  async function rejected(names: string[]): Promise<void> {
    await t.a.accept({ messages: names.map((id) => newMessage(id)), now: 1_000 });
    await t.a.claim('up1', 1_000, names.length);
    await Promise.all(names.map((id, i) => (i % 2 === 0 ? t.a : t.b)
      .recordSubmit(id, [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'no', attempts: 1 }], 2_000)));
  }

  it('each record is taken by one instance: two writers taking and dropping at once over 400 records', async () => {
    await rejected(ids(400));
    expect(await t.a.pendingRecords()).toBe(400);
    const writtenBy = new Map<string, string[]>();
    const writer = async (store: PostgresStore) => {
      for (;;) {
        const taken = await store.takeRecords(15, NOW);
        if (taken.length === 0) return;
        for (const r of taken) writtenBy.set(r.messageId, [...(writtenBy.get(r.messageId) ?? []), store.instanceId]);
        await store.dropRecords(taken.map((r) => r.seq));
      }
    };
    await Promise.all([writer(t.a), writer(t.b)]);
    expect(writtenBy.size).toBe(400);
    expect([...writtenBy.values()].filter((who) => who.length !== 1)).toEqual([]);
    expect(new Set([...writtenBy.values()].flat())).toEqual(new Set(['host-a', 'host-b']));
    expect(await t.b.pendingRecords()).toBe(0);
  });

  it('records an instance holds are its own until its lease runs out, then another takes them', async () => {
    await rejected(ids(6));
    const names = (records: ReadonlyArray<{ messageId: string }>) => records.map((r) => r.messageId).sort();
    const held = names(await t.a.takeRecords(4, NOW));
    expect(held).toHaveLength(4);
    // B gets what A does not hold.
    const rest = ids(6).filter((id) => !held.includes(id));
    expect(names(await t.b.takeRecords(10, NOW + 1))).toEqual(rest);
    // Each taking again gets what it holds (a batch it could not write), not the other's.
    expect(names(await t.a.takeRecords(10, NOW + 2))).toEqual(held);
    expect(names(await t.b.takeRecords(10, NOW + 2 + LEASE - 1))).toEqual(rest);
    // A's lease (renewed by its last take at NOW + 2) has run out: B takes over, and A's rows are B's now.
    expect(names(await t.b.takeRecords(10, NOW + 2 + LEASE))).toEqual(ids(6));
    expect(await t.a.takeRecords(10, NOW + 3 + LEASE)).toEqual([]);
    const holders = await t.schema.sql<{ claimed_by: string; n: number }>('SELECT claimed_by, COUNT(*)::int AS n FROM message_records GROUP BY claimed_by');
    expect(holders).toEqual([{ claimed_by: 'host-b', n: 6 }]);
  });
});
