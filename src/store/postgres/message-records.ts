/**
 * The record queue (`../message-records.ts`) in the PostgreSQL store. Records are queued by the
 * transaction's writes (`writes.ts`, in the commit that made their message final). Several
 * instances take from one queue: a take claims its rows for this instance until `now + leaseMs`
 * (FOR UPDATE SKIP LOCKED: two takes at once never get the same row), so each record goes to one
 * instance's file. A take also returns the rows this instance holds (a batch whose write failed,
 * or a run before a restart), and those of an instance whose lease has run out: it is gone, or
 * cannot write; the record is then written by both at worst (at least once).
 */
import type { MessageRecord } from '../message-records.js';
import type { Migration } from '../rules/migrations.js';
import { RECORD_COLUMNS, recordPartsSql, toMessageRecords, type RecordPartRow, type RecordRow } from '../rules/message-records.js';
import type { Queryable, Tx } from './db.js';

/**
 * Migration 12, as the SQLite store's version 12, with who holds a record and until when
 * (`claimed_by`, `lease_until`). The retention sweep keeps a message while its record is queued
 * (message_records_message).
 */
export const PG_RECORDS_MIGRATION: Migration = {
  version: 12,
  name: 'message records',
  sql: `
CREATE TABLE message_records (
  seq         BIGSERIAL PRIMARY KEY,
  message_id  TEXT   NOT NULL,
  status      TEXT   NOT NULL,
  reason      TEXT,
  at          BIGINT NOT NULL,
  claimed_by  TEXT,
  lease_until BIGINT
);
CREATE INDEX message_records_message ON message_records (message_id);
`,
};

// $1 this instance, $2 now, $3 the limit, $4 the lease's end. The queue holds what is not written
// yet (a few batches at most while the writers keep up): its walk in seq order passes only the
// rows other instances hold.
const TAKE_SQL = `WITH taken AS (
    SELECT seq FROM message_records
    WHERE claimed_by IS NULL OR claimed_by = $1 OR lease_until <= $2
    ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE message_records q SET claimed_by = $1, lease_until = $4 FROM taken WHERE q.seq = taken.seq
    RETURNING q.seq, q.message_id, q.status, q.reason, q.at)
  SELECT ${RECORD_COLUMNS} FROM claimed r LEFT JOIN messages m ON m.id = r.message_id ORDER BY r.seq`;
const PARTS_SQL = recordPartsSql('(SELECT unnest($1::text[]))');
const DROP_SQL = 'DELETE FROM message_records WHERE seq = ANY($1::bigint[])';
const PENDING_SQL = 'SELECT count(*) AS n FROM message_records';

export async function takeRecords(tx: Tx, instanceId: string, limit: number, now: number, leaseUntil: number): Promise<MessageRecord[]> {
  const rows = await tx.rows<RecordRow>(TAKE_SQL, [instanceId, now, Math.max(1, Math.floor(limit)), leaseUntil]);
  if (rows.length === 0) return [];
  const parts = await tx.rows<RecordPartRow>(PARTS_SQL, [[...new Set(rows.map((r) => r.message_id))]]);
  return toMessageRecords(rows, parts);
}

export function dropRecords(db: Queryable, seqs: readonly number[]): Promise<number> {
  return seqs.length === 0 ? Promise.resolve(0) : db.run(DROP_SQL, [[...seqs]]);
}

export async function pendingRecords(db: Queryable): Promise<number> {
  return (await db.row<{ n: number }>(PENDING_SQL))?.n ?? 0;
}
