/**
 * The record queue (`../message-records.ts`) in the SQLite store: one process uses the file, so a
 * take needs no claim; the writer takes, writes and drops one batch at a time.
 */
import type { MessageRecord } from '../message-records.js';
import type { Migration } from '../rules/migrations.js';
import { RECORD_COLUMNS, recordPartsSql, toMessageRecords, type RecordPartRow, type RecordRow } from '../rules/message-records.js';
import type { MessageStatusRow } from '../rows.js';
import type { Sql } from './sql.js';

/**
 * Migration 12 (listed in `migrations.ts`; never edited once released). A record keeps what the
 * commit decided (status, reason, time); the rest is read from its message when it is taken, and
 * the retention sweep keeps a message while its record is queued (message_records_message).
 */
export const RECORDS_MIGRATION: Migration = {
  version: 12,
  name: 'message records',
  sql: `
CREATE TABLE message_records (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT    NOT NULL,
  status     TEXT    NOT NULL,
  reason     TEXT,
  at         INTEGER NOT NULL
);
CREATE INDEX message_records_message ON message_records (message_id);
`,
};

const QUEUE_SQL = 'INSERT INTO message_records (message_id, status, reason, at) VALUES (?, ?, ?, ?)';
const TAKE_SQL = `SELECT ${RECORD_COLUMNS} FROM message_records r LEFT JOIN messages m ON m.id = r.message_id ORDER BY r.seq LIMIT ?`;
const PARTS_SQL = recordPartsSql('(SELECT value FROM json_each(?))');
const DROP_SQL = 'DELETE FROM message_records WHERE seq IN (SELECT value FROM json_each(?))';
const PENDING_SQL = 'SELECT COUNT(*) AS n FROM message_records';

/** Part of the commit in which `message` became final: queues its record, when this store keeps records. */
export function queueRecord(sql: Sql, message: MessageStatusRow, at: number): void {
  if (sql.records) sql.run(QUEUE_SQL, message.id, message.status, message.reason, at);
}

export function takeRecords(sql: Sql, limit: number): MessageRecord[] {
  const rows = sql.all<RecordRow>(TAKE_SQL, Math.max(1, Math.floor(limit)));
  if (rows.length === 0) return [];
  const parts = sql.all<RecordPartRow>(PARTS_SQL, JSON.stringify([...new Set(rows.map((r) => r.message_id))]));
  return toMessageRecords(rows, parts);
}

export function dropRecords(sql: Sql, seqs: readonly number[]): number {
  return seqs.length === 0 ? 0 : sql.run(DROP_SQL, JSON.stringify(seqs)).changes;
}

export function pendingRecords(sql: Sql): number {
  return sql.get<{ n: number }>(PENDING_SQL)?.n ?? 0;
}
