/** claim: the oldest messages of an upstream that may go now, their queued parts made inflight. */
import { groupClaimed, readyAt, type MessageRow, type MessageStatusRow, type PartStatusRow, type QueuedPartRow } from '../rows.js';
import type { ClaimedMessage } from '../store.js';
import type { Sql } from './sql.js';

/** The statements of a claim, named so a test can hold their query plans. */
export const CLAIM_SQL = {
  /**
   * A message is claimable when its first queued part is: not held (batch active or none,
   * schedule released or none), `not_before` passed, not expired. Walks `parts_claim` in message
   * order and stops after `limit` messages, so the cost grows with the limit, not the queue.
   */
  claimable: `SELECT p.message_id FROM parts p INDEXED BY parts_claim
    WHERE p.upstream = ? AND p.state = 'queued' AND p.held = 0
      AND (p.not_before IS NULL OR p.not_before <= ?)
      AND (p.expires_at IS NULL OR p.expires_at >= ?)
      AND NOT EXISTS (SELECT 1 FROM parts q WHERE q.message_id = p.message_id AND q.part < p.part AND +q.state = 'queued')
    ORDER BY p.message_seq, p.part
    LIMIT ?`,
  /**
   * The queued parts of the claimed messages (a JSON array of their ids), each with its message's
   * addressing, in claim order: one statement for the whole claim, not one per message.
   */
  queuedParts: `SELECT p.*, m.source, m.destination, m.registered_delivery, m.source_ton, m.source_npi, m.dest_ton,
      m.dest_npi, m.validity_period, m.client, m.status AS message_status, m.reason AS message_reason, m.processed,
      m.events, m.updated_at AS message_updated_at,
      (SELECT COUNT(*) FROM parts a WHERE a.message_id = p.message_id) AS part_count
    FROM json_each(?) c
      JOIN parts p ON p.message_id = c.value AND +p.state = 'queued'
      JOIN messages m ON m.id = p.message_id
    ORDER BY c.key, p.part`,
  markInflight: `UPDATE parts SET state = 'inflight', updated_at = ?
    WHERE message_id IN (SELECT value FROM json_each(?)) AND +state = 'queued'`,
} as const;

// `+state`: keeps SQLite from walking the large parts_state index for a term that the primary
// key (message_id, part) narrows to a few rows. Without statistics the planner prefers that
// index, and a claim of 100 messages would read every queued part 100 times.

/** The first part a claim would take now: when it became ready is how far the dispatcher is behind. */
const READY_SINCE_SQL = CLAIM_SQL.claimable.replace('SELECT p.message_id FROM', 'SELECT p.updated_at, p.not_before FROM');

export function readySince(sql: Sql, upstream: string, now: number): number | null {
  const first = sql.get<{ updated_at: number; not_before: number | null }>(READY_SINCE_SQL, upstream, now, now, 1);
  return first ? readyAt(first) : null;
}

export function claim(sql: Sql, upstream: string, now: number, limit: number): ClaimedMessage[] {
  if (limit <= 0) return [];
  const ids = sql.all<{ message_id: string }>(CLAIM_SQL.claimable, upstream, now, now, Math.floor(limit));
  if (ids.length === 0) return [];
  const list = JSON.stringify(ids.map((r) => r.message_id));
  const rows = sql.all<ClaimRow>(CLAIM_SQL.queuedParts, list);
  sql.run(CLAIM_SQL.markInflight, now, list);
  cacheClaimed(sql, rows, now);
  return groupClaimed(rows);
}

/** A queued part as the claim reads it: with its message's status columns, and how many parts the message has. */
type ClaimRow = QueuedPartRow & Pick<MessageRow, 'client' | 'processed' | 'events'> & {
  message_status: MessageRow['status'];
  message_reason: string | null;
  message_updated_at: number;
  part_count: number;
};

/**
 * Keeps the claimed messages' status rows (`sql.statuses`) as the claim left them, for their
 * submit outcomes and receipts: those whose parts are all in the claim (a message with parts
 * done already is read when its outcome comes).
 */
function cacheClaimed(sql: Sql, rows: readonly ClaimRow[], now: number): void {
  for (let i = 0; i < rows.length;) {
    const first = rows[i]!;
    let end = i + 1;
    while (end < rows.length && rows[end]!.message_id === first.message_id) end++;
    if (end - i === first.part_count) {
      const message: MessageStatusRow = {
        id: first.message_id, client: first.client, upstream: first.upstream, batch_id: first.batch_id, destination: first.destination,
        status: first.message_status, reason: first.message_reason, processed: first.processed, events: first.events,
        updated_at: first.message_updated_at,
      };
      const parts = rows.slice(i, end).map((p): PartStatusRow => ({
        message_id: p.message_id, part: p.part, upstream: p.upstream, batch_id: p.batch_id, state: 'inflight', status: p.status,
        smsc_id: p.smsc_id, match_key: p.match_key, bind: p.bind, attempts: p.attempts, reason: p.reason, updated_at: now,
      }));
      sql.statuses.put({ message, parts });
    } else {
      sql.statuses.forget(first.message_id);
    }
    i = end;
  }
}
