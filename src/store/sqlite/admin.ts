/**
 * What the admin API reads and keeps in the SQLite store: suspended upstreams, the queue per
 * upstream, message search and a message's story (the shared rules: `../rules/message-search.ts`).
 */
import type { FoundMessages, MessageQuery, MessageStory } from '../message-search.js';
import type { Migration } from '../rules/migrations.js';
import {
  pageOf, pageRange, searchStatement, storyOf, STORY_DELIVERED_COLUMNS, STORY_EVENT_COLUMNS, STORY_MESSAGE_COLUMNS, STORY_PART_COLUMNS, STORY_RECEIPT_COLUMNS,
  type FoundRow, type StoryDeliveredRow, type StoryEventRow, type StoryMessageRow, type StoryPartRow, type StoryReceiptRow,
} from '../rules/message-search.js';
import type { UpstreamSuspension } from '../upstream-suspensions.js';
import type { Sql } from './sql.js';

/**
 * Migration 11 (listed in `migrations.ts`; never edited once released): suspended upstreams; the
 * time each part was accepted by the SMSC (`sent_at`, NULL for parts sent before); and messages by
 * destination, newest last, for the operator's search by number (one more index on each accept).
 */
export const ADMIN_MIGRATION: Migration = {
  version: 11,
  name: 'upstream suspensions and message search',
  sql: `
CREATE TABLE upstream_suspensions (
  upstream TEXT    PRIMARY KEY,
  since    INTEGER NOT NULL,
  by_name  TEXT    NOT NULL,
  reason   TEXT
) WITHOUT ROWID;
ALTER TABLE parts ADD COLUMN sent_at INTEGER;
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

export function toSuspension(r: SuspensionRow): UpstreamSuspension {
  return { upstream: r.upstream, since: Number(r.since), by: r.by_name, reason: r.reason };
}

export function listSuspensions(sql: Sql): UpstreamSuspension[] {
  return sql.all<SuspensionRow>(`${SUSPENSION_SQL} ORDER BY upstream`).map(toSuspension);
}

export function suspendUpstream(sql: Sql, s: UpstreamSuspension): UpstreamSuspension {
  sql.run('INSERT INTO upstream_suspensions (upstream, since, by_name, reason) VALUES (?, ?, ?, ?) ON CONFLICT (upstream) DO NOTHING', s.upstream, s.since, s.by, s.reason);
  return toSuspension(sql.get<SuspensionRow>(`${SUSPENSION_SQL} WHERE upstream = ?`, s.upstream)!);
}

export function resumeUpstream(sql: Sql, upstream: string): boolean {
  return sql.run('DELETE FROM upstream_suspensions WHERE upstream = ?', upstream).changes > 0;
}

/** Queued parts per upstream: off parts_claim (not held) and parts_state's queued range (held ones), whichever SQLite takes. */
export function queuedByUpstream(sql: Sql): Array<{ upstream: string; queued: number }> {
  return sql.all("SELECT upstream, COUNT(*) AS queued FROM parts WHERE state = 'queued' GROUP BY upstream ORDER BY upstream");
}

export function findMessages(sql: Sql, q: MessageQuery): FoundMessages {
  const bounds = sql.get<{ top: number | null; oldest: number | null }>('SELECT MAX(seq) AS top, MIN(seq) AS oldest FROM messages')!;
  const range = pageRange(q, (bounds.top ?? 0) + 1);
  const { sql: text, params } = searchStatement(q, range, () => '?');
  const rows = sql.all<FoundRow>(text, ...params);
  const windowStart = range.low === null ? null
    : sql.get<{ created_at: number }>('SELECT created_at FROM messages WHERE seq >= ? ORDER BY seq LIMIT 1', range.low)?.created_at ?? null;
  return pageOf(rows, q, range, bounds.oldest, windowStart);
}

export function messageStory(sql: Sql, messageId: string): MessageStory | undefined {
  const m = sql.get<StoryMessageRow>(`SELECT ${STORY_MESSAGE_COLUMNS} FROM messages WHERE id = ?`, messageId);
  if (!m) return undefined;
  const parts = sql.all<StoryPartRow>(`SELECT ${STORY_PART_COLUMNS} FROM parts WHERE message_id = ? ORDER BY part`, messageId);
  const receipts = sql.all<StoryReceiptRow>(`SELECT ${STORY_RECEIPT_COLUMNS} FROM receipts WHERE message_id = ? ORDER BY received_at, id`, messageId);
  // Each state by its partial index (outbox_live, outbox_message_dead); the delivered ones by their log.
  const events = sql.all<StoryEventRow>(`SELECT ${STORY_EVENT_COLUMNS} FROM outbox WHERE message_id = ? AND state IN ('pending', 'blocked')
    UNION ALL SELECT ${STORY_EVENT_COLUMNS} FROM outbox WHERE message_id = ? AND state = 'dead' ORDER BY id`, messageId, messageId);
  const delivered = sql.all<StoryDeliveredRow>(`SELECT ${STORY_DELIVERED_COLUMNS} FROM event_deliveries WHERE message_id = ? ORDER BY event_id`, messageId);
  return storyOf(m, parts, receipts, events, delivered);
}
