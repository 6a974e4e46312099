/**
 * The retention sweep on PostgreSQL beyond the conformance scenarios: several instances sweeping
 * at once beside the hot path, and the plan of the windows (a seek by (time, id), never a scan).
 */
import { expect, it } from 'vitest';
import { PRUNE_WINDOW_SQL } from '../../../src/store/postgres/retention.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { PruneCursor } from '../../../src/store/retention.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `m${String(i).padStart(4, '0')}`);

const delivered = (key: string, receivedAt: number): ReceiptRecord =>
  ({ upstream: 'up1', keys: [key], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD' }, receivedAt });

/** Sweeps until the store says it is over; returns the messages it deleted. */
async function sweep(store: PostgresStore, before: number, limit: number): Promise<number> {
  let deleted = 0;
  let after: PruneCursor | null = null;
  do {
    const c = await store.pruneFinished(before, limit, after);
    deleted += c.messages;
    after = c.next;
  } while (after !== null);
  return deleted;
}

describePg('PostgresStore retention sweep', () => {
  const t = pgInstancesPerTest();

  it('two instances sweeping at once, while receipts change the same messages, neither fail nor deadlock; each message is deleted once or kept', async () => {
    const names = ids(1_200);
    await t.a.accept({ messages: names.map((id) => newMessage(id, { events: false, registeredDelivery: 0 })), now: 1_000 });
    await Promise.all((await t.a.claim('up1', 1_000, 2_000)).map((m) =>
      t.a.recordSubmit(m.id, [{ part: 1, kind: 'accepted', smscId: m.id, matchKey: m.id, bind: 'b1', attempts: 1 }], 2_000)));
    // Receipts dated after the cutoff for every third message, on both instances, during the sweeps:
    // each either lands first (its message changed after the cutoff: kept) or finds it gone (parked).
    const late = names.filter((_, i) => i % 3 === 0);
    const receipts = late.map((id, i) => (i % 2 === 0 ? t.a : t.b).applyReceipt(delivered(id, 50_000)));
    const [byA, byB, applied] = await Promise.all([sweep(t.a, 10_000, 50), sweep(t.b, 10_000, 50), Promise.all(receipts)]);

    const left = (await t.schema.sql<{ id: string }>('SELECT id FROM messages ORDER BY id')).map((r) => r.id);
    const matched = applied.flatMap((r, i) => (r.kind === 'matched' ? [late[i]] : []));
    expect(left).toEqual(matched);
    expect(byA + byB).toBe(names.length - matched.length);
    expect(await t.schema.sql('SELECT COUNT(*)::int AS n FROM parts WHERE message_id <> ALL($1::text[])', [left])).toEqual([{ n: 0 }]);
    expect(t.a.stats.retries + t.b.stats.retries).toBe(0);
    // What is left is kept only because it changed after the cutoff.
    expect(await sweep(t.a, 10_000, 50)).toBe(0);
    expect(await sweep(t.b, 60_000, 50)).toBe(left.length);
  });

  it('each window seeks its (time, id) index in order, in a custom and in a generic plan: no scan, no sort of the table', async () => {
    // Rows older than the cutoff exist only in a store that has run for the retention: autovacuum has analyzed it.
    await t.a.accept({ messages: ids(3_000).map((id) => newMessage(id, { events: false })), now: 1_000 });
    await t.schema.sql(`INSERT INTO batches (client, sender_id, req_type, message_type, created_at, updated_at)
      SELECT 'acme', 'ACME', 'bulk', 'GSM-7', g, g FROM generate_series(1, 3000) AS g`);
    await t.schema.sql(`INSERT INTO inbound (upstream, source, destination, text, data_coding, parts, received_at)
      SELECT 'up1', '447700900123', '12345', 'hi', 0, 1, g FROM generate_series(1, 3000) AS g`);
    await t.schema.sql('ANALYZE');
    for (const [table, index] of [['messages', 'messages_created'], ['batches', 'batches_created'], ['inbound', 'inbound_received']] as const) {
      await t.schema.sql('BEGIN');
      try {
        const sql = PRUNE_WINDOW_SQL[table];
        const text = (rows: Array<{ 'QUERY PLAN': string }>) => rows.map((r) => r['QUERY PLAN']).join('\n');
        const custom = text(await t.schema.sql(`EXPLAIN ${sql}`, [10_000, 999, 5, 1_000]));
        await t.schema.sql('SET LOCAL plan_cache_mode = force_generic_plan');
        await t.schema.sql(`PREPARE win AS ${sql}`);
        const generic = text(await t.schema.sql('EXPLAIN EXECUTE win(10000, 999, 5, 1000)'));
        for (const plan of [custom, generic]) {
          expect(plan, `${table}\n${plan}`).toMatch(new RegExp(`Index (Only )?Scan using ${index} on ${table}\\b`));
          expect(plan, `${table}\n${plan}`).toMatch(/Index Cond: \(\(ROW\(/);
          expect(plan, `${table}\n${plan}`).not.toMatch(new RegExp(`Seq Scan on ${table}\\b|Bitmap Heap Scan on ${table}\\b|\\bSort\\b`));
        }
      } finally {
        await t.schema.sql('ROLLBACK');
        await t.schema.sql('DEALLOCATE ALL');
      }
    }
  });
});
