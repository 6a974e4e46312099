/**
 * Idempotency keys (`../idempotency.ts`) in the SQLite store. One process uses the file, so a
 * pending key is this process's while its `owner` is set: the store clears it at open (a key left
 * pending by the run before belongs to nobody).
 */
import type { Migration } from '../rules/migrations.js';
import type { IdempotencyKeyRef, IdempotencyRecord, IdempotentResponse } from '../idempotency.js';
import type { AcceptRequest } from '../intake.js';
import { keyInUse, keyToRecord, recordOf, type IdempotencyRow } from '../rules/idempotency.js';
import type { Sql } from './sql.js';

/**
 * Migration 10 (listed in `migrations.ts`; never edited once released). A key is the scope, the
 * client and the key as sent; `expires_at` leads the index the sweep deletes by. No foreign key:
 * a key outlives its message when the retention is shorter than the key's life, and still answers
 * its id.
 */
export const IDEMPOTENCY_MIGRATION: Migration = {
  version: 10,
  name: 'idempotency keys',
  sql: `
CREATE TABLE idempotency_keys (
  scope       TEXT    NOT NULL CHECK (scope IN ('http', 'amqp')),
  client      TEXT    NOT NULL,
  key         TEXT    NOT NULL,
  fingerprint TEXT    NOT NULL,
  state       TEXT    NOT NULL CHECK (state IN ('pending', 'done')),
  message_id  TEXT,
  batch_id    INTEGER,
  status      INTEGER,
  body        TEXT,
  owner       TEXT,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (scope, client, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
};

/** The owner of this process's pending keys. */
const THIS_PROCESS = 'this';

// A key that expired is taken over as if it were not there.
const RECORD_SQL = `INSERT INTO idempotency_keys (scope, client, key, fingerprint, state, message_id, batch_id, owner, created_at, expires_at)
  VALUES (@scope, @client, @key, @fingerprint, @state, @messageId, @batchId, @owner, @now, @expiresAt)
  ON CONFLICT (scope, client, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state,
    message_id = excluded.message_id, batch_id = excluded.batch_id, status = NULL, body = NULL, owner = excluded.owner,
    created_at = excluded.created_at, expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= excluded.created_at`;

const FIND_SQL = `SELECT fingerprint, state, message_id, batch_id, status, body,
    CASE WHEN owner IS NULL THEN 'none' ELSE 'this' END AS owner, created_at, expires_at
  FROM idempotency_keys WHERE scope = ? AND client = ? AND key = ? AND expires_at > ?`;

const FINISH_SQL = `UPDATE idempotency_keys SET state = 'done', status = ?, body = ?, owner = NULL
  WHERE scope = ? AND client = ? AND key = ? AND state = 'pending'`;

const PRUNE_SQL = `DELETE FROM idempotency_keys WHERE (scope, client, key) IN (
  SELECT scope, client, key FROM idempotency_keys INDEXED BY idempotency_keys_expiry WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`;

/** Part of `accept`, after its batch is made: records the request's key, or throws IDEMPOTENCY_KEY_IN_USE. */
export function recordKey(sql: Sql, request: AcceptRequest, batchId: number | null): void {
  const key = keyToRecord(request);
  if (key === null) return;
  const recorded = sql.run(RECORD_SQL, {
    scope: key.scope, client: key.client, key: key.key, fingerprint: key.fingerprint, state: key.state, messageId: key.messageId,
    batchId, owner: key.state === 'pending' ? THIS_PROCESS : null, now: request.now, expiresAt: key.expiresAt,
  });
  if (recorded.changes === 0) throw keyInUse(key);
}

export function findKey(sql: Sql, ref: IdempotencyKeyRef, now: number): IdempotencyRecord | undefined {
  const row = sql.get<IdempotencyRow>(FIND_SQL, ref.scope, ref.client, ref.key, now);
  return row === undefined ? undefined : recordOf(row);
}

export function finishKey(sql: Sql, ref: IdempotencyKeyRef, response: IdempotentResponse): boolean {
  return sql.run(FINISH_SQL, response.status, response.body, ref.scope, ref.client, ref.key).changes > 0;
}

export function pruneKeys(sql: Sql, now: number, limit: number): number {
  return sql.run(PRUNE_SQL, now, Math.max(1, Math.floor(limit))).changes;
}

/** At open: the pending keys of the run before have no owner any more. */
export function releasePendingKeys(sql: Sql): void {
  sql.run('UPDATE idempotency_keys SET owner = NULL WHERE owner IS NOT NULL');
}
