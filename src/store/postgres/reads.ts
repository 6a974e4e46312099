/** Reads of messages and of the store's sizes (every instance's). */
import type { QueueDepth } from '../intake.js';
import type { OutboxDepth } from '../outbox.js';
import { toMessageView, type MessageViewRow, type PartViewRow } from '../rows.js';
import type { MessageView, StoreCounts } from '../status-reads.js';
import type { Queryable } from './db.js';
import { plannedEachRun } from './statements.js';

const MESSAGE_SQL = 'SELECT id, client, upstream, route, batch_id, source, destination, status, reason, created_at, updated_at FROM messages WHERE id = $1';
const PARTS_SQL = 'SELECT part, status, smsc_id, reason, attempts, updated_at FROM parts WHERE message_id = $1 ORDER BY part';

/** In one snapshot (`db` is a read transaction): the message's status and its parts' agree. */
export async function getMessage(db: Queryable, messageId: string): Promise<MessageView | undefined> {
  const m = await db.row<MessageViewRow>(MESSAGE_SQL, [messageId]);
  if (!m) return undefined;
  return toMessageView(m, await db.rows<PartViewRow>(PARTS_SQL, [messageId]));
}

/**
 * The counts of the queue and of the outbox read each state's rows off its partial index by a
 * plain index scan, never by a bitmap. An index keeps the entry of a row that left the state (a
 * claimed part is no longer queued) until VACUUM; a plain scan that finds such a row dead to every transaction marks its
 * entry so that later scans pass it by, a bitmap scan never does. Counted by bitmap, the queued
 * parts read every entry of every part that left the queue since the last VACUUM, once a second,
 * and every count more than the one before; counted by index scan, each count reads what is
 * queued and what left since the last one. Without a sequential
 * scan either: without statistics, the planner may take one for the index of a table with as
 * many dead entries. And counts per client grouped by hash, never by sorting the rows: without
 * statistics the planner took the queue for a few rows and sorted a large queue by client on
 * disk, several times slower than grouping by hash. For the rest of the (read) transaction `tx`.
 */
export const COUNT_BY_INDEX_SQL = "SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)";

// Planned each run (`plannedEachRun`): a plan is kept with no regard to the settings above.
// parts_queued carries each part's client: one index-only walk of it counts every client's.
export const QUEUE_DEPTH_SQL = plannedEachRun("SELECT client, COUNT(*) AS queued FROM parts WHERE state = 'queued' GROUP BY client");

// One count per partial index: parts_queued, parts_inflight, outbox_due, outbox_blocked, outbox_dead;
// the parked receipts (a few, for tens of milliseconds each) by parked_receipts_received.
export const COUNTS_SQL = plannedEachRun(`SELECT
    (SELECT COUNT(*) FROM parts WHERE state = 'queued') AS queued,
    (SELECT COUNT(*) FROM parts WHERE state = 'inflight') AS inflight,
    (SELECT COUNT(*) FROM parked_receipts) AS parked,
    (SELECT COUNT(*) FROM outbox WHERE state = 'pending') + (SELECT COUNT(*) FROM outbox WHERE state = 'blocked') AS outbox,
    (SELECT COUNT(*) FROM outbox WHERE state = 'dead') AS "deadEvents"`);

// Waiting events (due or backing-off heads, and the blocked ones behind them) and dead ones, per
// client, per partial index (outbox_due, outbox_blocked, outbox_dead: each leads with the client),
// instead of one scan of the whole table. Each live event costs a visit of its row until VACUUM
// marks its page all-visible, as the table scan did; what the indexes leave out is the dead rows.
export const OUTBOX_DEPTH_SQL = plannedEachRun(`SELECT c.client, sum(c.pending)::bigint AS pending, sum(c.dead)::bigint AS dead FROM (
    SELECT client, COUNT(*) AS pending, 0 AS dead FROM outbox WHERE state = 'pending' GROUP BY client
    UNION ALL SELECT client, COUNT(*), 0 FROM outbox WHERE state = 'blocked' GROUP BY client
    UNION ALL SELECT client, 0, COUNT(*) FROM outbox WHERE state = 'dead' GROUP BY client
  ) AS c GROUP BY c.client ORDER BY c.client COLLATE "C"`);

/** The rows of a count statement, read after COUNT_BY_INDEX_SQL in the same read transaction `tx`. */
async function countRows<R>(tx: Queryable, sql: string): Promise<R[]> {
  await tx.run(COUNT_BY_INDEX_SQL);
  return tx.rows<R>(sql);
}

export async function queueDepth(tx: Queryable): Promise<QueueDepth> {
  const byClient = await countRows<{ client: string; queued: number }>(tx, QUEUE_DEPTH_SQL);
  return { queued: byClient.reduce((n, c) => n + c.queued, 0), byClient };
}

export async function counts(tx: Queryable): Promise<StoreCounts> {
  return (await countRows<StoreCounts>(tx, COUNTS_SQL))[0] ?? { queued: 0, inflight: 0, parked: 0, outbox: 0, deadEvents: 0 };
}

export async function outboxDepth(tx: Queryable): Promise<OutboxDepth[]> {
  return countRows<OutboxDepth>(tx, OUTBOX_DEPTH_SQL);
}
