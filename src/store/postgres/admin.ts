/**
 * What the admin API reads and keeps in the PostgreSQL store: suspended upstreams (every instance
 * reads them, so one suspend holds on all), the queue per upstream, message search and a
 * message's story (the shared rules: `../rules/message-search.ts`).
 */
import type { FoundMessages, MessageQuery, MessageStory } from '../message-search.js';
import type { Migration } from '../rules/migrations.js';
import {
  pageOf, pageRange, searchStatement, storyOf, STORY_DELIVERED_COLUMNS, STORY_EVENT_COLUMNS, STORY_MESSAGE_COLUMNS, STORY_PART_COLUMNS, STORY_RECEIPT_COLUMNS,
  type FoundRow, type StoryDeliveredRow, type StoryEventRow, type StoryMessageRow, type StoryPartRow, type StoryReceiptRow,
} from '../rules/message-search.js';
import type { UpstreamSuspension } from '../upstream-suspensions.js';
import type { Queryable, Tx } from './db.js';
import { COUNT_BY_INDEX_SQL } from './reads.js';
import { plannedEachRun } from './statements.js';

/**
 * Migration 11 (listed in `migrations.ts`; never edited once released): as the SQLite store's
 * version 11. The column is added without a default (no rewrite); the index's build reads all
 * of messages under the migration lock.
 */
export const PG_ADMIN_MIGRATION: Migration = {
  version: 11,
  name: 'upstream suspensions and message search',
  sql: `
CREATE TABLE upstream_suspensions (
  upstream TEXT   PRIMARY KEY,
  since    BIGINT NOT NULL,
  by_name  TEXT   NOT NULL,
  reason   TEXT
);
ALTER TABLE parts ADD COLUMN sent_at BIGINT;
CREATE INDEX messages_destination ON messages (destination, seq);
`,
};

interface SuspensionRow {
  upstream: string;
  since: number;
  by_name: string;
  reason: string | null;
}

const SUSPENSION_SQL = 'SELECT upstream, since, by_name, reason FROM upstream_suspensions';

function toSuspension(r: SuspensionRow): UpstreamSuspension {
  return { upstream: r.upstream, since: Number(r.since), by: r.by_name, reason: r.reason };
}

export async function listSuspensions(db: Queryable): Promise<UpstreamSuspension[]> {
  return (await db.rows<SuspensionRow>(`${SUSPENSION_SQL} ORDER BY upstream COLLATE "C"`)).map(toSuspension);
}

/** Two instances suspending at once meet at the primary key: the second keeps the first's. */
export async function suspendUpstream(tx: Tx, s: UpstreamSuspension): Promise<UpstreamSuspension> {
  await tx.run('INSERT INTO upstream_suspensions (upstream, since, by_name, reason) VALUES ($1, $2, $3, $4) ON CONFLICT (upstream) DO NOTHING',
    [s.upstream, s.since, s.by, s.reason]);
  return toSuspension((await tx.row<SuspensionRow>(`${SUSPENSION_SQL} WHERE upstream = $1`, [s.upstream]))!);
}

export async function resumeUpstream(tx: Tx, upstream: string): Promise<boolean> {
  return (await tx.run('DELETE FROM upstream_suspensions WHERE upstream = $1', [upstream])) > 0;
}

// As the counts of reads.ts: by the partial index of queued parts, grouped by hash.
const QUEUED_BY_UPSTREAM_SQL = plannedEachRun("SELECT upstream, COUNT(*)::int AS queued FROM parts WHERE state = 'queued' GROUP BY upstream ORDER BY upstream COLLATE \"C\"");

/** In a read transaction (`tx`): the settings of COUNT_BY_INDEX_SQL hold for the rest of it. */
export async function queuedByUpstream(tx: Queryable): Promise<Array<{ upstream: string; queued: number }>> {
  await tx.run(COUNT_BY_INDEX_SQL);
  return tx.rows(QUEUED_BY_UPSTREAM_SQL);
}

/** In one read transaction (`tx`): the bounds and the page agree. */
export async function findMessages(tx: Queryable, q: MessageQuery): Promise<FoundMessages> {
  const bounds = (await tx.row<{ top: number | null; oldest: number | null }>('SELECT MAX(seq) AS top, MIN(seq) AS oldest FROM messages'))!;
  const range = pageRange(q, Number(bounds.top ?? 0) + 1);
  const { sql, params } = searchStatement(q, range, (n) => `$${n}`);
  // Planned with its values: the range and the number decide between the destination index and a range of seq.
  const rows = await tx.rows<FoundRow>(plannedEachRun(sql), params);
  const windowStart = range.low === null ? null
    : (await tx.row<{ created_at: number }>('SELECT created_at FROM messages WHERE seq >= $1 ORDER BY seq LIMIT 1', [range.low]))?.created_at ?? null;
  return pageOf(rows.map((r) => ({ ...r, seq: Number(r.seq) })), q, range, bounds.oldest === null ? null : Number(bounds.oldest), windowStart === null ? null : Number(windowStart));
}

/** In one read transaction (`tx`): the message, its parts, receipts and events agree. */
export async function messageStory(tx: Queryable, messageId: string): Promise<MessageStory | undefined> {
  const m = await tx.row<StoryMessageRow>(`SELECT ${STORY_MESSAGE_COLUMNS} FROM messages WHERE id = $1`, [messageId]);
  if (!m) return undefined;
  const parts = await tx.rows<StoryPartRow>(`SELECT ${STORY_PART_COLUMNS} FROM parts WHERE message_id = $1 ORDER BY part`, [messageId]);
  const receipts = await tx.rows<StoryReceiptRow>(`SELECT ${STORY_RECEIPT_COLUMNS} FROM receipts WHERE message_id = $1 ORDER BY received_at, id`, [messageId]);
  const events = await tx.rows<StoryEventRow>(`SELECT ${STORY_EVENT_COLUMNS} FROM outbox WHERE message_id = $1 AND state IN ('pending', 'blocked')
    UNION ALL SELECT ${STORY_EVENT_COLUMNS} FROM outbox WHERE message_id = $1 AND state = 'dead' ORDER BY id`, [messageId]);
  const delivered = await tx.rows<StoryDeliveredRow>(`SELECT ${STORY_DELIVERED_COLUMNS} FROM event_deliveries WHERE message_id = $1 ORDER BY event_id`, [messageId]);
  return storyOf(m, parts, receipts, events, delivered);
}
