/** claim: each client's oldest messages of an upstream that may go now, their queued parts made inflight. */
import { claimShares, walkClaim } from '../rules/claim-shares.js';
import { groupClaimed, readyAt, type MessageRow, type MessageStatusRow, type PartRow, type PartStatusRow, type QueuedPartRow } from '../rows.js';
import type { ClaimedMessage, ClaimShares } from '../claims.js';
import type { Sql } from './sql.js';

/** The statements of a claim, named so a test can hold their query plans. */
export const CLAIM_SQL = {
  /**
   * The clients with queued parts of an upstream that are not held, in name order: one probe of
   * parts_claim per client (it leads with the client after the upstream), however many parts
   * each has queued.
   */
  clients: `WITH RECURSIVE c(client) AS (
      SELECT (SELECT p.client FROM parts p INDEXED BY parts_claim WHERE p.upstream = @upstream AND p.state = 'queued' AND p.held = 0
        ORDER BY p.client LIMIT 1)
      UNION ALL
      SELECT (SELECT p.client FROM parts p INDEXED BY parts_claim WHERE p.upstream = @upstream AND p.state = 'queued' AND p.held = 0
        AND p.client > c.client ORDER BY p.client LIMIT 1)
      FROM c WHERE c.client IS NOT NULL
    )
    SELECT client FROM c WHERE client IS NOT NULL`,
  /**
   * A message is claimable when its first queued part is: not held (batch active or none,
   * schedule released or none), `not_before` passed, not expired. Walks one client's range of
   * `parts_claim` in message order and stops after `limit` messages, so the cost grows with the
   * limit, not the queue.
   */
  claimable: `SELECT p.message_id, p.message_seq FROM parts p INDEXED BY parts_claim
    WHERE p.upstream = ? AND p.client = ? AND p.state = 'queued' AND p.held = 0
      AND (p.not_before IS NULL OR p.not_before <= ?)
      AND (p.expires_at IS NULL OR p.expires_at >= ?)
      AND NOT EXISTS (SELECT 1 FROM parts q WHERE q.message_id = p.message_id AND q.part < p.part AND +q.state = 'queued')
    ORDER BY p.message_seq, p.part
    LIMIT ?`,
  /**
   * The queued parts of the claimed messages (a JSON array of their ids), each with its message's
   * addressing and status columns and how many parts the message has, in claim order: one
   * statement for the whole claim, not one per message. Read as arrays (`ClaimColumns`).
   */
  queuedParts: `SELECT p.message_id, p.part, p.upstream, p.batch_id, p.data_coding, p.esm_class, p.short_message, p.sar_ref,
      p.sar_total, p.sar_seq, p.payload, p.status, p.smsc_id, p.match_key, p.bind, p.attempts, p.reason,
      m.source, m.destination, m.registered_delivery, m.source_ton, m.source_npi, m.dest_ton, m.dest_npi, m.validity_period,
      m.client, m.status, m.reason, m.processed, m.events, m.updated_at,
      (SELECT COUNT(*) FROM parts a WHERE a.message_id = p.message_id), m.vendor_tlvs
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

/** The first part a claim of one client would take now. */
const READY_SINCE_SQL = CLAIM_SQL.claimable.replace('SELECT p.message_id, p.message_seq FROM', 'SELECT p.updated_at, p.not_before FROM');

/** The clients of `upstream` with queued parts that are not held. */
function queuedClients(sql: Sql, upstream: string): string[] {
  return sql.all<{ client: string }>(CLAIM_SQL.clients, { upstream }).map((r) => r.client);
}

/** Since when the part that has waited longest among each client's first claimable one has been ready. */
export function readySince(sql: Sql, upstream: string, now: number): number | null {
  let since: number | null = null;
  for (const client of queuedClients(sql, upstream)) {
    const first = sql.get<{ updated_at: number; not_before: number | null }>(READY_SINCE_SQL, upstream, client, now, now, 1);
    if (first) since = Math.min(since ?? Infinity, readyAt(first));
  }
  return since;
}

export function claim(sql: Sql, upstream: string, now: number, take: number | ClaimShares): ClaimedMessage[] {
  let heads: Array<{ message_id: string; message_seq: number }> = [];
  let clients = 0;
  walkClaim(claimShares(take), queuedClients(sql, upstream), (client, limit) => {
    const taken = sql.all<{ message_id: string; message_seq: number }>(CLAIM_SQL.claimable, upstream, client, now, now, limit);
    heads = heads.length === 0 ? taken : heads.concat(taken);
    if (taken.length > 0) clients++;
    return taken.length;
  });
  if (heads.length === 0) return [];
  // Each client's are in message order already; several clients' interleave by age.
  if (clients > 1) heads.sort((a, b) => a.message_seq - b.message_seq);
  const list = JSON.stringify(heads.map((r) => r.message_id));
  const rows = sql.rows<ClaimColumns>(CLAIM_SQL.queuedParts, list).map((c) => claimRow(c, now));
  sql.run(CLAIM_SQL.markInflight, now, list);
  cacheClaimed(sql, rows);
  return groupClaimed(rows);
}

/** The columns of `CLAIM_SQL.queuedParts`, in order. */
type ClaimColumns = [
  message_id: string, part: number, upstream: string, batch_id: number | null, data_coding: number, esm_class: number, short_message: Buffer,
  sar_ref: number | null, sar_total: number | null, sar_seq: number | null, payload: Buffer | null, status: MessageRow['status'],
  smsc_id: string | null, match_key: string | null, bind: string | null, attempts: number, reason: string | null,
  source: string, destination: string, registered_delivery: number, source_ton: number, source_npi: number, dest_ton: number,
  dest_npi: number, validity_period: string,
  client: string, message_status: MessageRow['status'], message_reason: string | null, processed: number, events: number,
  message_updated_at: number, part_count: number, vendor_tlvs: Buffer | null,
];

/** A queued part as the claim leaves it (inflight, changed now): with its message's status columns, and how many parts the message has. */
type ClaimRow = QueuedPartRow & PartRow & Pick<MessageRow, 'client' | 'processed' | 'events'> & {
  message_status: MessageRow['status'];
  message_reason: string | null;
  message_updated_at: number;
  part_count: number;
};

function claimRow(c: ClaimColumns, now: number): ClaimRow {
  return {
    message_id: c[0], part: c[1], upstream: c[2], batch_id: c[3], data_coding: c[4], esm_class: c[5], short_message: c[6],
    sar_ref: c[7], sar_total: c[8], sar_seq: c[9], payload: c[10], state: 'inflight', status: c[11], smsc_id: c[12],
    match_key: c[13], bind: c[14], attempts: c[15], reason: c[16], updated_at: now,
    source: c[17], destination: c[18], registered_delivery: c[19], source_ton: c[20], source_npi: c[21], dest_ton: c[22],
    dest_npi: c[23], validity_period: c[24],
    client: c[25], message_status: c[26], message_reason: c[27], processed: c[28], events: c[29], message_updated_at: c[30],
    part_count: c[31], vendor_tlvs: c[32],
  };
}

/**
 * Keeps the claimed messages' status rows (`sql.statuses`) as the claim left them, for their
 * submit outcomes and receipts: those whose parts are all in the claim (a message with parts
 * done already is read when its outcome comes) and that asked for a receipt (one that did not
 * stays SENT: it would be kept until pushed out).
 */
function cacheClaimed(sql: Sql, rows: readonly ClaimRow[]): void {
  for (let i = 0; i < rows.length;) {
    const first = rows[i]!;
    let end = i + 1;
    while (end < rows.length && rows[end]!.message_id === first.message_id) end++;
    if (end - i === first.part_count && first.registered_delivery !== 0) {
      const message: MessageStatusRow = {
        id: first.message_id, client: first.client, upstream: first.upstream, batch_id: first.batch_id, destination: first.destination,
        status: first.message_status, reason: first.message_reason, processed: first.processed, events: first.events,
        updated_at: first.message_updated_at,
      };
      const parts = rows.slice(i, end).map((p): PartStatusRow => ({
        message_id: p.message_id, part: p.part, upstream: p.upstream, batch_id: p.batch_id, state: p.state, status: p.status,
        smsc_id: p.smsc_id, match_key: p.match_key, bind: p.bind, attempts: p.attempts, reason: p.reason, updated_at: p.updated_at,
      }));
      sql.statuses.put({ message, parts });
    } else {
      sql.statuses.forget(first.message_id);
    }
    i = end;
  }
}
