/**
 * Failover moves with two PostgresStore instances on one schema, as two smppd processes on two
 * hosts: one moves an unavailable upstream's queued messages while the other claims from it. Each
 * message must end up either claimed on the old upstream or moved to the new one, never both, and
 * each assertion is on what the shared tables hold.
 */
import { expect, it } from 'vitest';
import type { MessageMove } from '../../../src/store/rerouting.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { until } from '../../support/engine.js';
import { newMessage, partBody } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest, type PgSchema } from './pg-store.js';

const names = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);
/** How many parts a message is moved with: 1 to 3, so the count changes for most. */
const movedParts = (id: string) => 1 + (Number(id.slice(1)) % 3);

function moveTo(id: string, upstream: string): MessageMove {
  const count = movedParts(id);
  return {
    id, from: 'up1', upstream, encoding: 'GSM-7', registeredDelivery: 1, sourceTon: 5, sourceNpi: 0,
    parts: Array.from({ length: count }, (_, i) => partBody(`${id} ${i + 1}`, { esmClass: count > 1 ? 0x40 : 0 })),
  };
}

const bulk = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null } as const;

/** A batch's gate, as `locks.ts` takes it. */
const GATE_SQL = 'SELECT pg_advisory_xact_lock(hashtext($1), ($2::bigint % 2147483647)::int)';

/** The batch ids whose gates a transaction waits for now, one per waiting transaction, as `pg_locks` shows them. */
async function waitingGates(schema: PgSchema): Promise<number[]> {
  const rows = await schema.sql<{ objid: number }>(`SELECT l.objid FROM pg_locks l
    WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 2 AND l.classid = hashtext($1)::oid
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, [`smppd.batch:${schema.name}`]);
  return rows.map((r) => Number(r.objid));
}

describePg('PostgresStore shared by two instances: failover moves', () => {
  const t = pgInstancesPerTest({ leaseMs: 60_000 });

  it('a message is claimed on its old upstream or moved to the new one, never both, however the two interleave', async () => {
    const all = names(400);
    await t.a.accept({ messages: all.map((id, i) => newMessage(id, { partCount: 1 + ((i + 1) % 2) })), now: 1 });
    const claimedOld = new Map<string, number>();
    const moved: string[] = [];
    const claimer = async () => {
      for (;;) {
        const got = await t.b.claim('up1', 10, 3);
        for (const m of got) claimedOld.set(m.id, (claimedOld.get(m.id) ?? 0) + 1);
        if (got.length === 0) return;
      }
    };
    // Two movers on the same list: the second to come finds a message gone from `from`.
    const mover = async (store: PostgresStore) => {
      for (;;) {
        const movable = await store.movable('up1', 15, 20);
        if (movable.length === 0) return;
        moved.push(...await store.move(movable.map((m) => moveTo(m.id, 'up2')), 20));
      }
    };
    await Promise.all([claimer(), claimer(), claimer(), mover(t.a), mover(t.a), mover(t.b)]);

    expect(claimedOld.size).toBeGreaterThan(0);
    expect(moved.length).toBeGreaterThan(0);
    expect([...claimedOld.values()].filter((n) => n !== 1)).toEqual([]);
    expect(new Set(moved).size).toBe(moved.length);
    expect(moved.filter((id) => claimedOld.has(id))).toEqual([]);
    expect(claimedOld.size + moved.length).toBe(all.length);

    const claimedNew: Array<[string, number]> = [];
    for (let got = await t.a.claim('up2', 30, 50); got.length > 0; got = await t.a.claim('up2', 30, 50)) {
      claimedNew.push(...got.map((m): [string, number] => [m.id, m.parts.length]));
    }
    expect(claimedNew.map(([id]) => id).sort()).toEqual([...moved].sort());
    expect(claimedNew.filter(([id, parts]) => parts !== movedParts(id))).toEqual([]);

    // Every part where its message is, and nothing left behind.
    expect(await t.schema.sql('SELECT p.message_id FROM parts p JOIN messages m ON m.id = p.message_id WHERE p.upstream <> m.upstream')).toEqual([]);
    const oldParts = all.reduce((n, id, i) => n + (claimedOld.has(id) ? 1 + ((i + 1) % 2) : 0), 0);
    const newParts = moved.reduce((n, id) => n + movedParts(id), 0);
    expect(await t.a.counts()).toMatchObject({ queued: 0, inflight: oldParts + newParts });
  });

  it('a move that finds the message locked by a claim under way waits for it, then leaves the message', async () => {
    await t.a.accept({ messages: [newMessage('x', { partCount: 2 })], now: 1 });
    expect((await t.a.movable('up1', 10, 2)).map((m) => m.id)).toEqual(['x']);
    // Another instance's claim, between its lock and its commit.
    await t.schema.sql('BEGIN');
    await t.schema.sql("UPDATE parts SET state = 'inflight', claimed_by = 'host-b', lease_until = 99999 WHERE message_id = 'x'");
    let settled = false;
    const moving = t.a.move([moveTo('x', 'up2')], 20).finally(() => { settled = true; });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(settled).toBe(false);
    await t.schema.sql('COMMIT');
    expect(await moving).toEqual([]);
    expect(await t.schema.sql("SELECT part, upstream, state FROM parts WHERE message_id = 'x' ORDER BY part"))
      .toEqual([{ part: 1, upstream: 'up1', state: 'inflight' }, { part: 2, upstream: 'up1', state: 'inflight' }]);
    expect((await t.a.getMessage('x'))?.upstream).toBe('up1');
  });

  it('a pause committed while a move waits for the batch\'s gate keeps the message where it is', async () => {
    const { batchId } = await t.a.accept({ messages: [newMessage('x')], batch: bulk, now: 1 });
    expect((await t.a.movable('up1', 10, 2)).map((m) => m.id)).toEqual(['x']);
    // Hold the batch's gate, as a pause under way does, and pause it in the same transaction.
    await t.schema.sql('BEGIN');
    await t.schema.sql(GATE_SQL, [`smppd.batch:${t.schema.name}`, batchId]);
    await t.schema.sql("UPDATE batches SET state = 'paused' WHERE id = $1", [batchId]);
    await t.schema.sql("UPDATE parts SET held = 1 WHERE batch_id = $1 AND state <> 'done'", [batchId]);
    const moving = t.a.move([moveTo('x', 'up2')], 20);
    await until(async () => (await waitingGates(t.schema)).length === 1, 5_000, 'the move to wait for the gate');
    await t.schema.sql('COMMIT');
    expect(await moving).toEqual([]);
    expect(await t.schema.sql("SELECT upstream, held FROM parts WHERE message_id = 'x'")).toEqual([{ upstream: 'up1', held: 1 }]);
    await t.b.setBatchState('acme', batchId!, 'active', 31);
    expect(await t.b.claim('up2', 32, 10)).toEqual([]);
    expect((await t.b.claim('up1', 32, 10)).map((m) => m.id)).toEqual(['x']);
  });

  it('a release of due schedules takes their gates in batch id order, as a move does: the two never wait on each other', async () => {
    // The older batch's schedule is due last: in run_at order the release would take the newer gate first.
    const older = await t.a.accept({ messages: [newMessage('o')], batch: bulk, schedule: { client: 'acme', runAt: 200, repeat: null }, now: 1 });
    const newer = await t.a.accept({ messages: [newMessage('n')], batch: bulk, schedule: { client: 'acme', runAt: 100, repeat: null }, now: 1 });
    expect(older.batchId!).toBeLessThan(newer.batchId!);
    // The newer batch's gate held (a pause under way), so each taker stops where its order leads it.
    await t.schema.sql('BEGIN');
    await t.schema.sql(GATE_SQL, [`smppd.batch:${t.schema.name}`, newer.batchId]);
    const releasing = t.a.releaseDue(1_000);
    let moving: Promise<string[]> | undefined;
    try {
      await until(async () => (await waitingGates(t.schema)).length === 1, 5_000, 'the release to wait for a gate');
      moving = t.b.move([moveTo('o', 'up2'), moveTo('n', 'up2')], 1_000);
      await until(async () => (await waitingGates(t.schema)).length === 2, 5_000, 'the move to wait for a gate');
      // The release holds the older gate and waits for the newer; the move waits for the older, holding none.
      // (In run_at order both would wait for the newer one, the move holding the older: a deadlock once it is let go.)
      expect((await waitingGates(t.schema)).sort((x, y) => x - y)).toEqual([older.batchId, newer.batchId]);
    } finally {
      await t.schema.sql('COMMIT');
    }
    expect(await releasing).toBe(2);
    expect(await moving).toEqual(['o', 'n']);
    expect((await t.a.claim('up2', 1_001, 10)).map((m) => m.id)).toEqual(['o', 'n']);
  });
});
