/** claim: the oldest messages of an upstream that may go now, their queued parts made inflight. */
import { groupClaimed, readyAt, type QueuedPartRow } from '../rows.js';
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
      m.dest_npi, m.validity_period
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
  const claimed = groupClaimed(sql.all<QueuedPartRow>(CLAIM_SQL.queuedParts, list));
  sql.run(CLAIM_SQL.markInflight, now, list);
  return claimed;
}
