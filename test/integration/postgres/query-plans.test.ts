/**
 * The plans of the hot path, on a schema whose tables have no statistics yet (a fresh install, a
 * bulk load before autovacuum's first ANALYZE), as PostgreSQL plans each statement: with its
 * parameters (a custom plan) and, once a prepared statement has run a few times, without them
 * (a generic plan); the status changes' lock and flush are always planned with their parameters
 * (`plannedEachRun`). Each must reach its rows through an index: a scan of parts, messages or the
 * outbox costs a hot-path statement the size of the table; and a join must not search a batch's
 * whole array again for each row it joins (`= ANY` beside a join key in one index condition).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { CLAIM_SQL } from '../../../src/store/postgres/claim.js';
import { ABANDONED_EVENTS_SQL, CLAIM_EVENTS_SQL, LOG_AND_SUPERSEDE_SQL, RENEW_EVENT_LEASES_SQL } from '../../../src/store/postgres/event-delivery.js';
import { LOCK_SQL } from '../../../src/store/postgres/part-status.js';
import { isPlannedEachRun } from '../../../src/store/postgres/statements.js';
import { FIND_PARTS_SQL } from '../../../src/store/postgres/receipts.js';
import { COUNT_BY_INDEX_SQL, COUNTS_SQL, OUTBOX_DEPTH_SQL, QUEUE_DEPTH_SQL } from '../../../src/store/postgres/reads.js';
import { MOVABLE_SQL, MOVE_SQL } from '../../../src/store/postgres/rerouting.js';
import { LOCK_KEYS_SQL } from '../../../src/store/postgres/status-writes.js';
import { ABANDONED_SQL, RENEW_LEASES_SQL } from '../../../src/store/postgres/submit.js';
import { FLUSH_SQL, PendingWrites } from '../../../src/store/postgres/writes.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newMessage } from '../../support/sqlite-store.js';
import { describePg, pgSchema, type PgSchema } from './pg-store.js';

/** A parameter as an SQL literal, for EXECUTE (which takes no bind parameters). */
function literal(v: unknown): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return literal(`{${v.map((x) => (x === null ? 'NULL' : `"${String(x).replace(/["\\]/g, '\\$&')}"`)).join(',')}}`);
  return `'${String(v).replaceAll("'", "''")}'`;
}

/** The custom and the generic plan of `sql` with `params`, on a connection with the store's session settings. */
async function plansOf(schema: PgSchema, sql: string, params: unknown[]): Promise<{ custom: string; generic: string }> {
  const text = (rows: Array<{ 'QUERY PLAN': string }>) => rows.map((r) => r['QUERY PLAN']).join('\n');
  await schema.sql('BEGIN');
  try {
    const custom = text(await schema.sql(`EXPLAIN ${sql}`, params));
    await schema.sql('SET LOCAL plan_cache_mode = force_generic_plan');
    await schema.sql(`PREPARE hot AS ${sql}`);
    const generic = text(await schema.sql(`EXPLAIN EXECUTE hot(${params.map(literal).join(', ')})`));
    return { custom, generic };
  } finally {
    await schema.sql('ROLLBACK');
    await schema.sql('DEALLOCATE ALL');
  }
}

const noScanOf = (plan: string, ...tables: string[]) => {
  for (const t of tables) expect(plan).not.toMatch(new RegExp(`Seq Scan on ${t}\\b`));
};

describePg('PostgresStore query plans of the hot path, before any ANALYZE', () => {
  let schema: PgSchema;
  let store: PostgresStore;
  beforeEach(async () => {
    schema = await pgSchema();
    store = await schema.open();
    for (let k = 0; k < 3; k++) {
      await store.accept({ messages: Array.from({ length: 2_000 }, (_, i) => newMessage(`m${k}-${i}`, { partCount: 1 + (i % 3) })), now: 1 });
    }
    const claimed = await store.claim('up1', 10, 500);
    for (const m of claimed.slice(0, 100)) {
      await store.recordSubmit(m.id, m.parts.map((p) => ({ part: p.part, kind: 'accepted' as const, smscId: `${m.id}/${p.part}`, matchKey: `${m.id}/${p.part}`, bind: 'b', attempts: 1 })), 20);
    }
  });
  afterEach(async () => schema.cleanup());

  const plans = (sql: string, params: unknown[]) => plansOf(schema, sql, params);

  it('a claim finds the clients by a probe of parts_claim each, walks each client\'s range in order and finds each message\'s first queued part through parts_queued', async () => {
    for (const plan of Object.values(await plans(CLAIM_SQL, ['up1', 10, ['acme'], [100], 1, 'test-a', 1_000, 100]))) {
      expect(plan).toMatch(/Recursive Union[^]*Index Only Scan using parts_claim/);
      // Each client's share: its range of parts_claim in index order (no sort), locked as it is read, cut at the share.
      expect(plan).toMatch(/Limit[^\n]*\n\s*->\s+LockRows[^\n]*\n\s*->\s+Index Scan using parts_claim on parts \w+[^\n]*\n\s*Index Cond: \(\(upstream = [^)]+\) AND \(client = /);
      expect(plan).toContain('parts_queued');
      // The taken parts are updated by key, never by reading every queued part.
      expect(plan).toMatch(/Update on parts t[^]*Index Cond: \(message_id = ANY/);
      expect(plan).not.toMatch(/Bitmap Heap Scan on parts|Materialize/);
      noScanOf(plan, 'parts', 'messages');
    }
  });

  it('receipts find their parts through parts_match', async () => {
    for (const plan of Object.values(await plans(FIND_PARTS_SQL, [[0, 0, 1], ['up1', 'up1', 'up1'], ['nomatch', 'm0-1/1', 'm0-2/1'], [0, 1, 0]]))) {
      expect(plan).toContain('parts_match');
      noScanOf(plan, 'parts', 'messages');
    }
  });

  /** An index condition that joins by a key and also searches an array (evaluated again for every row joined). */
  const ARRAY_SEARCH_PER_ROW = /Cond: .*(= [a-z_]+\.[a-z_]+.*= ANY|= ANY.*= [a-z_]+\.[a-z_]+)/;

  it('a status change locks its messages and parts by key, and writes them back by key, planned with its arrays', async () => {
    expect(isPlannedEachRun(LOCK_SQL) && isPlannedEachRun(FLUSH_SQL)).toBe(true);
    const lock = (await plans(LOCK_SQL, [['m0-1', 'm0-2']])).custom;
    noScanOf(lock, 'parts', 'messages');
    expect(lock).not.toMatch(ARRAY_SEARCH_PER_ROW);
    const params = [
      ['m0-1'], [1], ['done'], ['SENT'], [null], ['S'], ['s'], ['b'], [1], [null], [30], [null], [null],
      ['m0-1'], ['SENT'], [null], [1], [30],
      [], [], [], [], [], [], [], [], [], [],
      ['m0-1'], ['acme'], ['up1'], ['{}'], [30],
      [],
      [1], [1], 30,
      ['m0-1'], ['DELIVERED'], [null], [30],
    ];
    const flush = (await plans(FLUSH_SQL, params)).custom;
    noScanOf(flush, 'parts', 'messages', 'outbox', 'batches');
    expect(flush).not.toMatch(ARRAY_SEARCH_PER_ROW);
  });

  it('a failover lists an upstream\'s queued messages off parts_movable in order, and moves them by key', async () => {
    // upstream, limit, after, now
    const list = (await plans(MOVABLE_SQL, ['up1', 100, 0, 10])).custom;
    expect(list).toContain('parts_movable');
    expect(list).not.toMatch(/Sort/);
    noScanOf(list, 'parts', 'messages');
    expect(isPlannedEachRun(MOVE_SQL.lock) && isPlannedEachRun(MOVE_SQL.updateMessages)).toBe(true);
    for (const plan of Object.values(await plans(MOVE_SQL.lockGates, ['smppd.batch:x', ['m0-1', 'm0-2']]))) noScanOf(plan, 'messages');
    for (const plan of Object.values(await plans(MOVE_SQL.deleteParts, [['m0-1', 'm0-2']]))) noScanOf(plan, 'parts');
    const lock = (await plans(MOVE_SQL.lock, [['m0-1', 'm0-2']])).custom;
    noScanOf(lock, 'parts', 'messages');
    expect(lock).not.toMatch(ARRAY_SEARCH_PER_ROW);
    const update = (await plans(MOVE_SQL.updateMessages, [['m0-1'], ['up2'], ['GSM-7'], [1], [5], [0], [null]])).custom;
    noScanOf(update, 'messages');
    expect(update).not.toMatch(ARRAY_SEARCH_PER_ROW);
  });

  it('the queue\'s and the outbox\'s counts read each state off its partial index by an index scan, never by bitmap (which leaves dead entries unmarked)', async () => {
    const explain = async (sql: string) => (await schema.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`)).map((r) => r['QUERY PLAN']).join('\n');
    await schema.sql('BEGIN');
    try {
      expect(await explain(QUEUE_DEPTH_SQL)).toContain('Bitmap Index Scan on parts_queued');
      await schema.sql(COUNT_BY_INDEX_SQL);
      const depth = await explain(QUEUE_DEPTH_SQL);
      const counts = await explain(COUNTS_SQL);
      const outbox = await explain(OUTBOX_DEPTH_SQL);
      for (const plan of [depth, counts, outbox]) expect(plan).not.toMatch(/Bitmap|Seq Scan on (parts|outbox)\b/);
      expect(depth).toContain('Index Only Scan using parts_queued');
      // Per client by hash: never a sort of the queued parts (the planner's choice here without the settings).
      expect(depth).toContain('HashAggregate');
      expect(depth).not.toContain('Sort');
      for (const index of ['parts_queued', 'parts_inflight', 'outbox_due', 'outbox_blocked', 'outbox_dead']) expect(counts).toContain(`Index Only Scan using ${index}`);
      for (const index of ['outbox_due', 'outbox_blocked', 'outbox_dead']) expect(outbox).toContain(`Index Only Scan using ${index}`);
    } finally {
      await schema.sql('ROLLBACK');
    }
  });

  it('the lease upkeep renews and takes over by parts_inflight and outbox_leased, one probe per instance when nobody is gone', async () => {
    await store.claimEvents('acme', 100, 500, 60_000);
    const space = `smppd.instance:${schema.name}`;
    const abandoned = await plans(ABANDONED_SQL, ['test-b', 30, space]);
    const renew = await plans(RENEW_LEASES_SQL, ['test-a', 30, 60]);
    const renewEvents = await plans(RENEW_EVENT_LEASES_SQL, ['test-a', 30, 60]);
    const abandonedEvents = await plans(ABANDONED_EVENTS_SQL, ['test-b', 30, space]);
    // The instances holding parts or events: a probe each of the index's leading column.
    for (const plan of Object.values(abandoned)) expect(plan).toMatch(/Recursive Union[^]*Index Only Scan using parts_inflight/);
    for (const plan of Object.values(abandonedEvents)) expect(plan).toMatch(/Recursive Union[^]*Index Only Scan using outbox_leased/);
    for (const plan of Object.values(renew)) expect(plan).toMatch(/Index Scan using parts_inflight on parts\s+\(.*\n\s*Index Cond: \(\(claimed_by = /);
    for (const plan of [...Object.values(abandoned), ...Object.values(renew)]) noScanOf(plan, 'parts');
    for (const plan of [...Object.values(renewEvents), ...Object.values(abandonedEvents)]) {
      expect(plan).toMatch(/Index Cond: \(leased_by = /);
      // Never every pending event (outbox_due) to find the few leased ones.
      expect(plan).not.toContain('outbox_due');
      noScanOf(plan, 'outbox');
    }
  });

  it('an event claim walks outbox_due in order', async () => {
    for (const plan of Object.values(await plans(CLAIM_EVENTS_SQL, ['acme', 100, 100, 1_000, 'test-a', 500]))) {
      expect(plan).toContain('outbox_due');
      noScanOf(plan, 'outbox');
    }
  });
});

/**
 * A status change of a full batch (500 messages) on tables of 40,000 messages that have no
 * statistics: what a new schema meets in its first minute of a burst, before autovacuum's first
 * ANALYZE. Left to its costs, the planner joins the batch's keys to parts and messages by hash
 * over a scan of each table (the control below); the store's session settings (`sessionOptions`)
 * keep every join an index probe per key.
 */
describePg('PostgresStore query plans of a batch of 500, on tables of 40,000 without statistics', () => {
  const SIZE = 40_000;
  const BATCH = Array.from({ length: 500 }, (_, i) => `bulk-${1 + i * 79}`);
  let schema: PgSchema;
  beforeEach(async () => {
    schema = await pgSchema();
    await schema.open();
    await schema.sql(`INSERT INTO messages (id, client, upstream, source, destination, text, message_type, encoding, registered_delivery,
        source_ton, source_npi, dest_ton, dest_npi, validity_period, status, created_at, updated_at)
      SELECT 'bulk-' || g, 'acme', 'up1', 'Acme', '+4477009' || g, 'hello', 'text', 'GSM7', 1, 5, 0, 1, 1, '', 'SENT', 1, 1
      FROM generate_series(1, ${SIZE}) g`);
    await schema.sql(`INSERT INTO parts (message_id, part, message_seq, upstream, data_coding, esm_class, short_message, state, status,
        smsc_id, match_key, updated_at)
      SELECT 'bulk-' || g, 1, g, 'up1', 0, 0, '\\x68656c6c6f'::bytea, 'done', 'SENT', 's' || g, 's' || g, 1 FROM generate_series(1, ${SIZE}) g`);
    const [stats] = await schema.sql<{ n: string }>("SELECT count(*) AS n FROM pg_stats WHERE schemaname = current_schema() AND tablename IN ('parts', 'messages')");
    expect(Number(stats?.n)).toBe(0);
  });
  afterEach(async () => schema.cleanup());

  const noJoinByHashOrMerge = (plan: string) => expect(plan).not.toMatch(/Hash Join|Merge Join|Hash Semi Join/);

  it('the lock of 500 messages probes parts by key; with the server\'s defaults it would scan parts', async () => {
    const lock = (await plansOf(schema, LOCK_SQL, [BATCH])).custom;
    noJoinByHashOrMerge(lock);
    noScanOf(lock, 'parts');
    expect(lock).toContain('parts_pkey');

    await schema.sql('BEGIN');
    try {
      await schema.sql('SET LOCAL enable_hashjoin = on');
      await schema.sql('SET LOCAL enable_mergejoin = on');
      const rows = await schema.sql<{ 'QUERY PLAN': string }>(`EXPLAIN ${LOCK_SQL}`, [BATCH]);
      expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Seq Scan on parts\b/);
    } finally {
      await schema.sql('ROLLBACK');
    }
  });

  it('the flush of 500 parts, messages and events writes each by key, and looks up each message\'s undelivered events by key', async () => {
    // The outbox of a webhook receiver that has been down a while: every message's SENT waits.
    await schema.sql(`INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
      SELECT 'status', 'bulk-' || g, 'acme', 'up1', '{}', 1, 1, 1, 'pending' FROM generate_series(1, ${SIZE}) g`);
    const writes = new PendingWrites();
    BATCH.forEach((id, i) => {
      writes.part({
        message_id: id, part: 1, message_seq: i + 1, upstream: 'up1', batch_id: null, state: 'done', status: 'DELIVERED', smsc_id: `s${i}`,
        match_key: `s${i}`, bind: 'b', attempts: 1, not_before: null, reason: null, updated_at: 2, expires_at: null, claimed_by: null, lease_until: null,
      });
      writes.message({
        seq: i + 1, id, client: 'acme', upstream: 'up1', batch_id: null, destination: '+44', status: 'DELIVERED', reason: null, processed: 1,
        events: 1, updated_at: 2,
      });
      writes.statusEvent({ client: 'acme', upstream: 'up1' }, {
        type: 'status', messageId: id, channel: 'sms', destination: '+44', status: 'DELIVERED', timestamp: '2026-01-01T00:00:00Z', reason: null,
        batchId: null, part: { part: 1, status: 'DELIVERED', smscMessageId: `s${i}` }, parts: 1, smscMessageId: `s${i}`, receipt: null,
      }, 2);
    });
    const flush = (await plansOf(schema, FLUSH_SQL, writes.take(true))).custom;
    noJoinByHashOrMerge(flush);
    noScanOf(flush, 'parts', 'messages', 'outbox');
    expect(flush).toContain('outbox_live');
  });

  it('the settle of 500 delivered events logs them and finds each message\'s dead events by key', async () => {
    // A receiver back after a while: every message has a dead SUBMITTED, and its SENT is delivered.
    await schema.sql(`INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
      SELECT 'status', 'bulk-' || g, 'acme', 'up1', '{}', 1, 1, 1, s FROM generate_series(1, ${SIZE}) g, unnest(ARRAY['dead', 'pending']) s`);
    const ids = BATCH.map((_, i) => 2 * (1 + i * 79));
    const params = [BATCH, ids, BATCH.map(() => 'acme'), BATCH.map(() => 'status'), BATCH.map(() => 'SENT'), BATCH.map(() => 1), BATCH.map(() => 1), BATCH.map(() => null), 2];
    for (const plan of Object.values(await plansOf(schema, LOG_AND_SUPERSEDE_SQL, params))) {
      noJoinByHashOrMerge(plan);
      noScanOf(plan, 'outbox');
      expect(plan).toContain('outbox_message_dead');
      expect(plan).toMatch(/Insert on event_deliveries/);
    }
  });

  it('the receipt keys of 500 submit outcomes find their messages by id, in the generic plan too (with 500 receipts\' keys beside them)', async () => {
    const receiptKeys = BATCH.map((id) => `${id}/r`);
    const params = ['space', BATCH, BATCH.map((id) => `${id}/1`), receiptKeys.map(() => 'up1'), receiptKeys];
    for (const plan of Object.values(await plansOf(schema, LOCK_KEYS_SQL, params))) {
      noJoinByHashOrMerge(plan);
      noScanOf(plan, 'messages');
    }
  });
});
