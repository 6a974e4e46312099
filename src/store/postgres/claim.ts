/**
 * claim: each client's oldest messages of an upstream that may go now, their queued parts made
 * inflight under this instance's claim, in one statement. Several instances claim from the same
 * queue: each locks the first queued part of the messages it takes (FOR UPDATE SKIP LOCKED) and
 * passes over those another claim holds, so no message is handed to two instances, and none waits.
 */
import { claimShares } from '../rules/claim-shares.js';
import { groupClaimed, readyAt, type QueuedPartRow } from '../rows.js';
import type { ClaimedMessage, ClaimShares } from '../claims.js';
import type { Queryable } from './db.js';

/**
 * The clients with queued parts of upstream $1 that are not held, in name order: a loose index
 * scan of parts_claim (which leads with the client after the upstream), one probe per client
 * however many parts each has queued.
 */
const QUEUED_CLIENTS = `queued_clients AS (
    (SELECT p.client FROM parts p WHERE p.upstream = $1 AND p.state = 'queued' AND p.held = 0 ORDER BY p.client LIMIT 1)
    UNION ALL
    SELECT (SELECT p.client FROM parts p WHERE p.upstream = $1 AND p.state = 'queued' AND p.held = 0 AND p.client > c.client
      ORDER BY p.client LIMIT 1)
    FROM queued_clients c WHERE c.client IS NOT NULL
  )`;

/**
 * A message is claimable when its first queued part is: not held (batch active or none,
 * schedule released or none), `not_before` passed, not expired. A head locked by another claim is
 * skipped; its message's later parts are no heads (the subquery sees the locked head, which row
 * locks do not hide from a read), so they are not taken either. Walks one client's range of
 * parts_claim (`s.client`) in message order.
 *
 * "First queued part" is a scalar subquery, not a NOT EXISTS: the planner turns a NOT EXISTS into
 * an anti join, and before the table has statistics (a fresh schema, a bulk load) it chose one
 * that read every queued part for every candidate. The subquery is one probe of parts_queued, and
 * is not run for a part 1 (no part comes before it): most messages have one part, and the probe
 * is a large share of PostgreSQL's CPU in a claim.
 */
const CLAIMABLE = `FROM parts p
  WHERE p.upstream = $1 AND p.client = s.client AND p.state = 'queued' AND p.held = 0
    AND (p.not_before IS NULL OR p.not_before <= $2)
    AND (p.expires_at IS NULL OR p.expires_at >= $2)
    AND (p.part = 1 OR p.part = (SELECT min(q.part) FROM parts q WHERE q.message_id = p.message_id AND q.state = 'queued'))
  ORDER BY p.message_seq, p.part`;

/**
 * $3/$4: the listed clients and how many of each to take at most; $5: how many of each other
 * client; $8: how many in all (NULL: no cap). Each client's share is taken (and locked) by its
 * own walk, so a claim locks only what it takes, whatever the other clients have queued. The
 * clients not listed are walked first, in name order, then the listed ones in list order
 * (`walkClaim`): the LIMIT stops the walks, and locks nothing past, once $8 are taken.
 */
export const CLAIM_SQL = `WITH RECURSIVE ${QUEUED_CLIENTS}, heads AS (
    SELECT h.message_id FROM queued_clients s CROSS JOIN LATERAL (
      SELECT p.message_id ${CLAIMABLE} LIMIT $5 FOR UPDATE OF p SKIP LOCKED
    ) h
    WHERE s.client IS NOT NULL AND $5 > 0 AND s.client <> ALL ($3::text[])
    UNION ALL
    SELECT h.message_id FROM unnest($3::text[], $4::int[]) AS s(client, n) CROSS JOIN LATERAL (
      SELECT p.message_id ${CLAIMABLE} LIMIT s.n FOR UPDATE OF p SKIP LOCKED
    ) h
    WHERE s.n > 0
    LIMIT $8
  ), taken AS (
    UPDATE parts t SET state = 'inflight', claimed_by = $6, lease_until = $7, updated_at = $2
    WHERE t.message_id = ANY (ARRAY(SELECT h.message_id FROM heads h)) AND t.state = 'queued'
    RETURNING t.message_id, t.part, t.message_seq, t.upstream, t.attempts, t.data_coding, t.esm_class, t.short_message, t.sar_ref,
      t.sar_total, t.sar_seq, t.payload
  )
  SELECT taken.message_id, taken.part, taken.upstream, taken.attempts, taken.data_coding, taken.esm_class, taken.short_message,
    taken.sar_ref, taken.sar_total, taken.sar_seq, taken.payload,
    m.client, m.source, m.destination, m.registered_delivery, m.source_ton, m.source_npi, m.dest_ton, m.dest_npi, m.validity_period,
    m.vendor_tlvs
  FROM taken JOIN messages m ON m.id = taken.message_id
  ORDER BY taken.message_seq, taken.part`;

/** Each client's first claimable part, and the earliest time one of them became ready (`readyAt`). */
const READY_SINCE_SQL = `WITH RECURSIVE ${QUEUED_CLIENTS}
  SELECT f.updated_at, f.not_before FROM queued_clients s CROSS JOIN LATERAL (
    SELECT p.updated_at, p.not_before ${CLAIMABLE} LIMIT 1
  ) f
  WHERE s.client IS NOT NULL`;

export async function claim(db: Queryable, instanceId: string, upstream: string, now: number, take: number | ClaimShares, leaseUntil: number): Promise<ClaimedMessage[]> {
  const shares = claimShares(take);
  if (shares.max === 0 || (shares.others === 0 && shares.clients.every((c) => c.limit === 0))) return [];
  return groupClaimed(await db.rows<QueuedPartRow>(CLAIM_SQL, [
    upstream, now, shares.clients.map((c) => c.client), shares.clients.map((c) => c.limit), shares.others, instanceId, leaseUntil, shares.max ?? null,
  ]));
}

/** Since when the part that has waited longest among each client's first claimable one has been ready; null when none is. */
export async function readySince(db: Queryable, upstream: string, now: number): Promise<number | null> {
  const firsts = await db.rows<{ updated_at: number; not_before: number | null }>(READY_SINCE_SQL, [upstream, now]);
  return firsts.length === 0 ? null : Math.min(...firsts.map(readyAt));
}
