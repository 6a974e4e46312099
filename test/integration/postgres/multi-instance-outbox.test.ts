/**
 * Two PostgresStore instances on one schema delivering one outbox: each event goes to one
 * instance at a time, and a message's events go out one at a time, in order, whichever instance
 * takes them.
 */
import { expect, it } from 'vitest';
import type { PartResult } from '../../../src/store/claims.js';
import type { OutboxEvent } from '../../../src/store/outbox.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const LEASE = 60_000;
const NOW = 10_000;

const accepted = (smscId: string): PartResult => ({ part: 1, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 });
const delivered = (key: string): ReceiptRecord => ({ upstream: 'up1', keys: [key], status: 'DELIVERED', reason: null, raw: { key }, receivedAt: 3_000 });
const statusOf = (e: OutboxEvent) => (JSON.parse(e.payload) as { status: string }).status;
const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);
const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

describePg('PostgresStore shared by two instances: the outbox', () => {
  const t = pgInstancesPerTest();

  /** Messages accepted, claimed, SENT (through A) and DELIVERED (receipts through B): SUBMITTED, SENT and DELIVERED events each. */
  async function threeEventsEach(names: string[]): Promise<void> {
    await t.a.accept({ messages: names.map((id) => newMessage(id)), now: 1_000 });
    await t.a.claim('up1', 1_000, names.length);
    await Promise.all(names.map((id) => t.a.recordSubmit(id, [accepted(`S-${id}`)], 2_000)));
    await Promise.all(names.map((id) => t.b.applyReceipt(delivered(`s-${id}`))));
  }

  it('each event is claimed by exactly one instance: 2 × 50 concurrent claimers over 1,000 events', async () => {
    await t.a.accept({ messages: ids(1_000).map((id) => newMessage(id)), now: 1_000 });
    const claims = new Map<number, string[]>();
    const claimer = async (store: PostgresStore) => {
      for (;;) {
        const got = await store.claimEvents('acme', NOW, 5, NOW + LEASE);
        if (got.length === 0) return;
        for (const e of got) claims.set(e.id, [...(claims.get(e.id) ?? []), store.instanceId]);
      }
    };
    await Promise.all([t.a, t.b].flatMap((store) => Array.from({ length: 50 }, () => claimer(store))));
    expect(claims.size).toBe(1_000);
    expect([...claims.values()].filter((who) => who.length !== 1)).toEqual([]);
    const byInstance = await t.schema.sql<{ leased_by: string; n: number }>('SELECT leased_by, COUNT(*) AS n FROM outbox GROUP BY leased_by ORDER BY leased_by');
    expect(byInstance.map((r) => r.leased_by)).toEqual(['host-a', 'host-b']);
    expect(byInstance.reduce((n, r) => n + r.n, 0)).toBe(1_000);
  });

  it('a message\'s events go out one at a time and in order, whichever instance takes them', async () => {
    const names = ids(60);
    await threeEventsEach(names);
    const holding = new Set<string>();
    const order = new Map<string, string[]>();
    const violations: string[] = [];
    let settled = 0;
    const worker = async (store: PostgresStore) => {
      while (settled < 180) {
        const got = await store.claimEvents('acme', NOW, 3, NOW + LEASE);
        if (got.length === 0) { await pause(); continue; }
        for (const e of got) {
          const m = e.messageId!;
          if (holding.has(m)) violations.push(`${m}: ${statusOf(e)} claimed while an earlier event was out`);
          holding.add(m);
          order.set(m, [...(order.get(m) ?? []), statusOf(e)]);
        }
        await pause();
        for (const e of got) holding.delete(e.messageId!);
        await store.settleEvents(got.map((e) => ({ id: e.id, kind: 'delivered' as const })), NOW);
        settled += got.length;
      }
    };
    await Promise.all([t.a, t.b].flatMap((store) => Array.from({ length: 10 }, () => worker(store))));
    expect(violations).toEqual([]);
    for (const m of names) expect(order.get(m)).toEqual(['SUBMITTED', 'SENT', 'DELIVERED']);
    expect(await t.a.counts()).toMatchObject({ outbox: 0 });
  });

  it('an event added on one instance while the other delivers the only one before it is pending, never blocked behind nothing', async () => {
    const names = ids(300);
    await t.a.accept({ messages: names.map((id) => newMessage(id)), now: 1_000 });
    await t.b.claim('up1', 1_000, 300);
    const heads = await t.a.claimEvents('acme', NOW, 300, NOW + LEASE);
    expect(heads.map(statusOf)).toEqual(Array(300).fill('SUBMITTED'));
    // A delivers each SUBMITTED (its message's only event) while B records the submit, which adds SENT.
    await Promise.all(heads.flatMap((e) => [
      t.a.settleEvents([{ id: e.id, kind: 'delivered' }], NOW),
      t.b.recordSubmit(e.messageId!, [accepted(`S-${e.messageId!}`)], 2_000),
    ]));
    const live = await t.schema.sql<{ message_id: string; states: string[] }>(
      `SELECT message_id, array_agg(state ORDER BY id) AS states FROM outbox WHERE state IN ('pending', 'blocked') GROUP BY message_id`);
    expect(live).toHaveLength(300);
    expect(live.filter((r) => r.states.join() !== 'pending')).toEqual([]);
  });

  it('a lease that ran out lets the other instance take the event; the first one\'s late retry leaves the new lease alone', async () => {
    await t.a.accept({ messages: [newMessage('x')], now: 1_000 });
    const [first] = await t.a.claimEvents('acme', NOW, 10, NOW + 100);
    expect(await t.b.claimEvents('acme', NOW + 99, 10, NOW + 99 + LEASE)).toEqual([]);
    const [again] = await t.b.claimEvents('acme', NOW + 100, 10, NOW + 100 + LEASE);
    expect(again?.id).toBe(first!.id);
    await t.a.settleEvents([{ id: first!.id, kind: 'retry', at: NOW + 200, error: 'HTTP 503' }], NOW + 150);
    expect(await t.schema.sql('SELECT next_attempt_at, leased_by, attempts FROM outbox')).toEqual([
      { next_attempt_at: NOW + 100 + LEASE, leased_by: 'host-b', attempts: 0 },
    ]);
    await t.b.settleEvents([{ id: again!.id, kind: 'delivered' }], NOW + 300);
    expect(await t.a.counts()).toMatchObject({ outbox: 0 });
  });

  it('a restart gives back its own leases only', async () => {
    await t.a.accept({ messages: ids(4).map((id) => newMessage(id)), now: 1_000 });
    // Leases that end well after the restart (opening gives back at the wall clock's now).
    expect(await t.a.claimEvents('acme', NOW, 2, Date.now() + LEASE)).toHaveLength(2);
    expect(await t.b.claimEvents('acme', NOW, 2, Date.now() + LEASE)).toHaveLength(2);
    await t.a.close();
    const restarted = await t.schema.open({ instanceId: 'host-a' });
    const back = await restarted.claimEvents('acme', Date.now() + 1, 10, Date.now() + LEASE);
    expect(back).toHaveLength(2);
    expect(await t.schema.sql('SELECT DISTINCT leased_by FROM outbox ORDER BY leased_by')).toEqual([{ leased_by: 'host-a' }, { leased_by: 'host-b' }]);
  });
});

describePg('PostgresStore shared by two instances: the events of an instance that is gone', () => {
  const STORE_LEASE = 5_000;
  const t = pgInstancesPerTest({ leaseMs: STORE_LEASE });
  const leases = () => t.schema.sql<{ leased_by: string | null; lease_until: number | null; next_attempt_at: number }>(
    'SELECT leased_by, lease_until, next_attempt_at FROM outbox ORDER BY id');

  it('a claim holds its events against a gone instance\'s takeover for the store\'s lease, the delivery for its own', async () => {
    await t.a.accept({ messages: ids(2).map((id) => newMessage(id)), now: 1_000 });
    await t.a.claimEvents('acme', NOW, 1, NOW + LEASE);
    await t.a.claimEvents('acme', NOW, 1, NOW + 1_000);
    expect(await leases()).toEqual([
      { leased_by: 'host-a', lease_until: NOW + STORE_LEASE, next_attempt_at: NOW + LEASE },
      { leased_by: 'host-a', lease_until: NOW + 1_000, next_attempt_at: NOW + 1_000 },
    ]);
  });

  it('renewEventLeases extends this instance\'s leases that end within half a lease, never past the delivery\'s own', async () => {
    await t.a.accept({ messages: ids(4).map((id) => newMessage(id)), now: 1_000 });
    await t.a.claimEvents('acme', NOW, 1, NOW + LEASE);
    await t.a.claimEvents('acme', NOW, 1, NOW + 6_000);
    await t.a.claimEvents('acme', NOW + 2_000, 1, NOW + 2_000 + LEASE);
    await t.b.claimEvents('acme', NOW, 1, NOW + LEASE);
    // At NOW + 3,000 the leases of A ending before NOW + 5,500 are renewed to NOW + 8,000, or their delivery's end.
    expect(await t.a.renewEventLeases(NOW + 3_000)).toBe(2);
    expect(await leases()).toEqual([
      { leased_by: 'host-a', lease_until: NOW + 3_000 + STORE_LEASE, next_attempt_at: NOW + LEASE },
      { leased_by: 'host-a', lease_until: NOW + 6_000, next_attempt_at: NOW + 6_000 },
      { leased_by: 'host-a', lease_until: NOW + 2_000 + STORE_LEASE, next_attempt_at: NOW + 2_000 + LEASE },
      { leased_by: 'host-b', lease_until: NOW + STORE_LEASE, next_attempt_at: NOW + LEASE },
    ]);
    expect(await t.a.renewEventLeases(NOW + 3_000)).toBe(0);
  });

  it('the events a crashed instance had claimed are due again once the store\'s lease has ended, long before their delivery\'s lease', async () => {
    await t.a.accept({ messages: ids(3).map((id) => newMessage(id)), now: 1_000 });
    expect(await t.a.claimEvents('acme', NOW, 2, NOW + LEASE)).toHaveLength(2);
    expect(await t.b.claimEvents('acme', NOW, 1, NOW + LEASE)).toHaveLength(1);
    await t.a.close(); // its instance lock goes with its connection, as when the process dies
    expect(await t.b.recoverAbandonedEvents(NOW + STORE_LEASE - 1)).toBe(0);
    expect(await t.b.claimEvents('acme', NOW + STORE_LEASE, 10, NOW + STORE_LEASE + LEASE)).toEqual([]);
    expect(await t.b.recoverAbandonedEvents(NOW + STORE_LEASE + 1)).toBe(2);
    expect(await t.b.claimEvents('acme', NOW + STORE_LEASE + 1, 10, NOW + STORE_LEASE + 1 + LEASE)).toHaveLength(2);
    // B's own lease is never B's to take over.
    expect(await t.b.recoverAbandonedEvents(NOW + LEASE * 10)).toBe(0);
  });

  it('a live instance\'s events are never taken over, however old their lease', async () => {
    await t.a.accept({ messages: ids(2).map((id) => newMessage(id)), now: 1_000 });
    await t.a.claimEvents('acme', NOW, 2, NOW + LEASE);
    expect(await t.b.recoverAbandonedEvents(NOW + LEASE - 1)).toBe(0);
    expect(await leases()).toEqual(Array(2).fill({ leased_by: 'host-a', lease_until: NOW + STORE_LEASE, next_attempt_at: NOW + LEASE }));
  });
});
