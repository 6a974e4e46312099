/**
 * The record queue (`../message-records.ts`) as both stores read it: the rows of a take, in the
 * SQL both dialects share, and their conversion to records. Each store adds how it takes the rows
 * (SQLite: the oldest, one process; PostgreSQL: claimed under a lease) and how it names a list.
 */
import type { DeliveryStatus } from '../../sms/status.js';
import type { MessageRecord, RecordPart } from '../message-records.js';

/** A queued record joined with its message (whose columns are null when it is gone). */
export interface RecordRow {
  seq: number;
  message_id: string;
  status: DeliveryStatus;
  reason: string | null;
  at: number;
  client: string | null;
  upstream: string | null;
  route: string | null;
  batch_id: number | null;
  source: string | null;
  destination: string | null;
  created_at: number | null;
}

export interface RecordPartRow {
  message_id: string;
  part: number;
  smsc_id: string | null;
  bind: string | null;
  accepted_at: number | null;
}

/** The message's columns of a record row, `r` the queue and `m` the message (LEFT JOIN). */
export const RECORD_COLUMNS = `r.seq, r.message_id, r.status, r.reason, r.at, m.client, m.upstream, m.route, m.batch_id, m.source,
  m.destination, m.created_at`;

/** When the SMSC accepted a part (its `submit_sm_resp`); null when it accepted none. */
const PART_ACCEPTED_AT = 'p.sent_at';

/** The parts of the records' messages, `ids` the dialect's list of message ids. */
export function recordPartsSql(ids: string): string {
  return `SELECT p.message_id, p.part, p.smsc_id, p.bind, ${PART_ACCEPTED_AT} AS accepted_at
  FROM parts p WHERE p.message_id IN ${ids} ORDER BY p.message_id, p.part`;
}

/** The rows of a take, with their messages' parts, as records in the order of the rows. */
export function toMessageRecords(rows: readonly RecordRow[], parts: readonly RecordPartRow[]): MessageRecord[] {
  const byMessage = new Map<string, RecordPart[]>();
  for (const p of parts) {
    let list = byMessage.get(p.message_id);
    if (!list) byMessage.set(p.message_id, (list = []));
    list.push({ part: p.part, smscId: p.smsc_id, bind: p.bind, acceptedAt: p.accepted_at });
  }
  return rows.map((r) => ({
    seq: r.seq,
    messageId: r.message_id,
    status: r.status,
    reason: r.reason,
    finalAt: r.at,
    message: r.client === null || r.created_at === null ? null : {
      client: r.client, upstream: r.upstream ?? '', route: r.route, batchId: r.batch_id, source: r.source ?? '',
      destination: r.destination ?? '', acceptedAt: r.created_at,
    },
    parts: (byMessage.get(r.message_id) ?? []).sort((a, b) => a.part - b.part),
  }));
}
