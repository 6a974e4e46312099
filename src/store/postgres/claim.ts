/**
 * claim: the oldest messages of an upstream that may go now, their queued parts made inflight
 * under this instance's claim, in one statement. Several instances claim from the same queue:
 * each locks the first queued part of the messages it takes (FOR UPDATE SKIP LOCKED) and passes
 * over those another claim holds, so no message is handed to two instances, and none waits.
 */
import { groupClaimed, readyAt, type QueuedPartRow } from '../rows.js';
import type { ClaimedMessage } from '../store.js';
import type { Queryable } from './db.js';

/**
 * A message is claimable when its first queued part is: not held (batch active or none,
 * schedule released or none), `not_before` passed, not expired. A head locked by another claim is
 * skipped; its message's later parts are no heads (the subquery sees the locked head, which row
 * locks do not hide from a read), so they are not taken either.
 *
 * "First queued part" is a scalar subquery, not a NOT EXISTS: the planner turns a NOT EXISTS into
 * an anti join, and before the table has statistics (a fresh schema, a bulk load) it chose one
 * that read every queued part for every candidate. The subquery is one probe of parts_queued, and
 * is not run for a part 1 (no part comes before it): most messages have one part, and the probe
 * was a fifth of PostgreSQL's CPU in a claim (bench/store-micro.ts: 34.5 -> 27 us a message).
 */
const CLAIMABLE = `FROM parts p
  WHERE p.upstream = $1 AND p.state = 'queued' AND p.held = 0
    AND (p.not_before IS NULL OR p.not_before <= $2)
    AND (p.expires_at IS NULL OR p.expires_at >= $2)
    AND (p.part = 1 OR p.part = (SELECT min(q.part) FROM parts q WHERE q.message_id = p.message_id AND q.state = 'queued'))
  ORDER BY p.message_seq, p.part`;

export const CLAIM_SQL = `WITH heads AS (
    SELECT p.message_id ${CLAIMABLE} LIMIT $3 FOR UPDATE OF p SKIP LOCKED
  ), taken AS (
    UPDATE parts t SET state = 'inflight', claimed_by = $4, lease_until = $5, updated_at = $2
    FROM heads h WHERE t.message_id = h.message_id AND t.state = 'queued'
    RETURNING t.message_id, t.part, t.message_seq, t.upstream, t.attempts, t.data_coding, t.esm_class, t.short_message, t.sar_ref,
      t.sar_total, t.sar_seq, t.payload
  )
  SELECT taken.message_id, taken.part, taken.upstream, taken.attempts, taken.data_coding, taken.esm_class, taken.short_message,
    taken.sar_ref, taken.sar_total, taken.sar_seq, taken.payload,
    m.source, m.destination, m.registered_delivery, m.source_ton, m.source_npi, m.dest_ton, m.dest_npi, m.validity_period
  FROM taken JOIN messages m ON m.id = taken.message_id
  ORDER BY taken.message_seq, taken.part`;

const READY_SINCE_SQL = `SELECT p.updated_at, p.not_before ${CLAIMABLE} LIMIT 1`;

export async function claim(db: Queryable, instanceId: string, upstream: string, now: number, limit: number, leaseUntil: number): Promise<ClaimedMessage[]> {
  if (limit <= 0) return [];
  return groupClaimed(await db.rows<QueuedPartRow>(CLAIM_SQL, [upstream, now, Math.floor(limit), instanceId, leaseUntil]));
}

/** Since when the first part a claim would take now has been ready; null when none is. */
export async function readySince(db: Queryable, upstream: string, now: number): Promise<number | null> {
  const first = await db.row<{ updated_at: number; not_before: number | null }>(READY_SINCE_SQL, [upstream, now]);
  return first ? readyAt(first) : null;
}
