/**
 * Idempotency keys (`../idempotency.ts`) in the PostgreSQL store. Two instances that record one
 * key at once meet at its primary key: the second's INSERT waits for the first's commit, then
 * finds the key and records nothing (its accept is refused whole, IDEMPOTENCY_KEY_IN_USE, and its
 * caller reads what the first recorded). A pending key names its instance (`owner`); the instance
 * is running while it holds its instance lock (`locks.ts`), and a restart clears its own keys'
 * owner at open: a key left pending by a process that is gone belongs to nobody.
 */
import type { IdempotencyKeyRef, IdempotencyRecord, IdempotentResponse } from '../idempotency.js';
import type { AcceptRequest } from '../intake.js';
import { keyInUse, keyToRecord, recordOf, type IdempotencyRow, type KeyToRecord } from '../rules/idempotency.js';
import type { Migration } from '../rules/migrations.js';
import type { Queryable, Tx } from './db.js';
import { liveInstancesSql, type LockSpaces } from './locks.js';

/** Migration 10 (listed in `migrations.ts`; never edited once released): as the SQLite store's version 10. */
export const PG_IDEMPOTENCY_MIGRATION: Migration = {
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
  batch_id    BIGINT,
  status      INTEGER,
  body        TEXT,
  owner       TEXT,
  created_at  BIGINT  NOT NULL,
  expires_at  BIGINT  NOT NULL,
  PRIMARY KEY (scope, client, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
};

// A key that expired is taken over as if it were not there; one that did not is returned by no row.
const RECORD_SQL = `INSERT INTO idempotency_keys (scope, client, key, fingerprint, state, message_id, batch_id, owner, created_at, expires_at)
  SELECT u.scope, u.client, u.key, u.fingerprint, u.state, u.message_id, u.batch_id, u.owner, u.now, u.expires_at
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::bigint[], $10::bigint[])
    AS u(scope, client, key, fingerprint, state, message_id, batch_id, owner, now, expires_at)
  ON CONFLICT (scope, client, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state,
    message_id = excluded.message_id, batch_id = excluded.batch_id, status = NULL, body = NULL, owner = excluded.owner,
    created_at = excluded.created_at, expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= excluded.created_at
  RETURNING scope, client, key`;

/** `$5` this instance, `$6` the instance lock space. */
const FIND_SQL = `SELECT k.fingerprint, k.state, k.message_id, k.batch_id, k.status, k.body,
    CASE WHEN k.owner IS NULL THEN 'none' WHEN k.owner = $5 THEN 'this'
      WHEN hashtext(k.owner)::oid IN (${liveInstancesSql(6)}) THEN 'other' ELSE 'none' END AS owner,
    k.created_at, k.expires_at
  FROM idempotency_keys k WHERE k.scope = $1 AND k.client = $2 AND k.key = $3 AND k.expires_at > $4`;

const FINISH_SQL = `UPDATE idempotency_keys SET state = 'done', status = $4, body = $5, owner = NULL
  WHERE scope = $1 AND client = $2 AND key = $3 AND state = 'pending'`;

// Several instances sweep at once: a key another holds (recorded again, or deleted) is left.
const PRUNE_SQL = `DELETE FROM idempotency_keys WHERE (scope, client, key) IN (
  SELECT scope, client, key FROM idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)`;

/** A key with the batch its request made and the time of its accept. */
interface KeyRow {
  key: KeyToRecord;
  batchId: number | null;
  now: number;
}

/**
 * Part of an accept (or of a group of loose accepts, `$now` each its own): records the requests'
 * keys in one statement, or throws IDEMPOTENCY_KEY_IN_USE for the first already recorded. No
 * statement without a key.
 */
export async function recordKeys(tx: Tx, requests: ReadonlyArray<{ request: AcceptRequest; batchId: number | null }>, instanceId: string): Promise<void> {
  const rows: KeyRow[] = [];
  for (const { request, batchId } of requests) {
    const key = keyToRecord(request);
    if (key !== null) rows.push({ key, batchId, now: request.now });
  }
  if (rows.length === 0) return;
  const col = <T>(f: (r: KeyRow) => T): T[] => rows.map(f);
  const recorded = await tx.rows<{ scope: string; client: string; key: string }>(RECORD_SQL, [
    col((r) => r.key.scope), col((r) => r.key.client), col((r) => r.key.key), col((r) => r.key.fingerprint), col((r) => r.key.state),
    col((r) => r.key.messageId), col((r) => r.batchId), col((r) => (r.key.state === 'pending' ? instanceId : null)),
    col((r) => r.now), col((r) => r.key.expiresAt),
  ]);
  if (recorded.length === rows.length) return;
  const done = new Set(recorded.map((r) => `${r.scope}\u0000${r.client}\u0000${r.key}`));
  const taken = rows.find((r) => !done.has(`${r.key.scope}\u0000${r.key.client}\u0000${r.key.key}`));
  throw keyInUse(taken!.key);
}

export async function findKey(db: Queryable, spaces: LockSpaces, instanceId: string, ref: IdempotencyKeyRef, now: number): Promise<IdempotencyRecord | undefined> {
  const row = await db.row<IdempotencyRow>(FIND_SQL, [ref.scope, ref.client, ref.key, now, instanceId, spaces.instance]);
  return row === undefined ? undefined : recordOf(row);
}

export async function finishKey(db: Queryable, ref: IdempotencyKeyRef, response: IdempotentResponse): Promise<boolean> {
  return (await db.run(FINISH_SQL, [ref.scope, ref.client, ref.key, response.status, response.body])) > 0;
}

export function pruneKeys(db: Queryable, now: number, limit: number): Promise<number> {
  return db.run(PRUNE_SQL, [now, Math.max(1, Math.floor(limit))]);
}

/** At open: this instance's pending keys were its previous run's, which is gone. */
export function releasePendingKeys(db: Queryable, instanceId: string): Promise<number> {
  return db.run('UPDATE idempotency_keys SET owner = NULL WHERE owner = $1', [instanceId]);
}
