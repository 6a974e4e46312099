/**
 * The retention sweep (`Store.pruneFinished`; the walk: `../rules/retention.ts`), as in the SQLite
 * store: one transaction per call, `limit` rows looked at at most, each window in one index range
 * (`(time, id) > (?, ?)`: PostgreSQL seeks a row value).
 *
 * Several instances sweep at once, beside the hot path, and nothing here waits for a lock: a row
 * another transaction holds is skipped (SKIP LOCKED, `pg_try_advisory_xact_lock`) and left to the
 * next sweep. What the window saw is checked again after the locks, by a statement of its own (a
 * newer snapshot): every writer of a message's parts, events and record holds the message's row
 * lock (`part-status.ts`, `outbox.ts`), and every change of a batch, of its schedule and every
 * append to it holds the batch's gate (`locks.ts`), so what the check sees cannot change before
 * COMMIT (a record written and dropped meanwhile only keeps its message for the next sweep).
 * A row is locked only after the lock it waits behind, so the sweep takes part in no deadlock.
 */
import type { PruneCounts, PruneCursor, PruneTable } from '../retention.js';
import { afterWindow, beginPrune, receiptNoLongerExpected, type PruneWindow } from '../rules/retention.js';
import type { Tx } from './db.js';
import type { LockSpaces } from './locks.js';

interface WindowRow {
  at: number;
  id: number;
  finished: boolean;
}

/** A message as the window sees it, and as the check after the lock sees it again; `$1` is the cutoff. */
const MESSAGE_FINISHED = `m.updated_at < $1
    AND ${receiptNoLongerExpected('$1')}
    AND NOT EXISTS (SELECT 1 FROM parts p WHERE p.message_id = m.id AND p.state <> 'done')
    AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.message_id = m.id AND o.state IN ('pending', 'blocked'))
    AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.message_id = m.id AND o.state = 'dead')
    AND NOT EXISTS (SELECT 1 FROM message_records q WHERE q.message_id = m.id)`;
const BATCH_FINISHED = `NOT EXISTS (SELECT 1 FROM messages m WHERE m.batch_id = b.id)
    AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.batch_id = b.id AND s.state = 'scheduled')`;
const INBOUND_FINISHED = 'NOT EXISTS (SELECT 1 FROM outbox o WHERE o.inbound_id = i.id)';

/** Each window: `$1` the cutoff; `$2`, `$3` the time and id of the row to go on after; `$4` the limit. */
export const PRUNE_WINDOW_SQL: Readonly<Record<PruneTable, string>> = {
  messages: `SELECT m.created_at AS at, m.seq AS id, (${MESSAGE_FINISHED}) AS finished FROM messages m
    WHERE (m.created_at, m.seq) > ($2::bigint, $3::bigint) AND m.created_at < $1 ORDER BY m.created_at, m.seq LIMIT $4`,
  batches: `SELECT b.created_at AS at, b.id, (${BATCH_FINISHED}) AS finished FROM batches b
    WHERE (b.created_at, b.id) > ($2::bigint, $3::bigint) AND b.created_at < $1 ORDER BY b.created_at, b.id LIMIT $4`,
  inbound: `SELECT i.received_at AS at, i.id, (${INBOUND_FINISHED}) AS finished FROM inbound i
    WHERE (i.received_at, i.id) > ($2::bigint, $3::bigint) AND i.received_at < $1 ORDER BY i.received_at, i.id LIMIT $4`,
};

// Messages whose row another transaction holds are skipped: it is changing them.
const LOCK_MESSAGES_SQL = 'SELECT seq FROM messages WHERE seq = ANY($1::bigint[]) ORDER BY seq FOR UPDATE SKIP LOCKED';

// Checked again after the lock ($1 the cutoff, $2 the locked seqs); children first in one
// statement: the foreign keys are checked at its end.
const DELETE_MESSAGES_SQL = `WITH d AS (
    SELECT m.id FROM messages m WHERE m.seq = ANY($2::bigint[]) AND ${MESSAGE_FINISHED}),
  dr AS (DELETE FROM receipts WHERE message_id IN (SELECT id FROM d)),
  dp AS (DELETE FROM parts WHERE message_id IN (SELECT id FROM d)),
  de AS (DELETE FROM event_deliveries WHERE message_id IN (SELECT id FROM d)),
  dm AS (DELETE FROM messages WHERE id IN (SELECT id FROM d) RETURNING 1)
  SELECT count(*) AS n FROM dm`;

// A batch whose gate is taken (an append, a state change of it or of its schedule under way) or
// whose row is locked (a submit outcome counting a message of it) is skipped. The gates are tried
// on the ids given, never on other rows a scan of the table passes.
const LOCK_BATCHES_SQL = `SELECT id FROM batches
  WHERE id IN (SELECT u.id FROM unnest($1::bigint[]) AS u(id) WHERE pg_try_advisory_xact_lock(hashtext($2), (u.id % 2147483647)::int))
  ORDER BY id FOR UPDATE SKIP LOCKED`;

const DELETE_BATCHES_SQL = `WITH d AS (
    SELECT b.id FROM batches b WHERE b.id = ANY($1::bigint[]) AND ${BATCH_FINISHED}),
  ds AS (DELETE FROM schedules WHERE batch_id IN (SELECT id FROM d)),
  db AS (DELETE FROM batches WHERE id IN (SELECT id FROM d) RETURNING 1)
  SELECT count(*) AS n FROM db`;

// An inbound message never gets an event after it is stored: no writer to wait for, only another
// instance's sweep deleting the same rows.
const DELETE_INBOUND_SQL = `WITH d AS (
    SELECT i.id FROM inbound i WHERE i.id = ANY($1::bigint[]) AND ${INBOUND_FINISHED} FOR UPDATE SKIP LOCKED),
  di AS (DELETE FROM inbound WHERE id IN (SELECT id FROM d) RETURNING 1)
  SELECT count(*) AS n FROM di`;

export async function pruneFinished(tx: Tx, spaces: LockSpaces, before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
  const call = beginPrune(limit, after);
  for (;;) {
    const done = afterWindow(call, await pruneWindow(tx, spaces, call.cursor, before, call.budget));
    if (done) return done;
  }
}

async function pruneWindow(tx: Tx, spaces: LockSpaces, cursor: PruneCursor, before: number, limit: number): Promise<PruneWindow> {
  const rows = await tx.rows<WindowRow>(PRUNE_WINDOW_SQL[cursor.table], [before, cursor.at, cursor.id, limit]);
  const finished = rows.filter((r) => r.finished).map((r) => r.id);
  return { looked: rows.length, last: rows.at(-1), deleted: finished.length === 0 ? 0 : await deleteFinished(tx, spaces, cursor.table, finished, before) };
}

async function deleteFinished(tx: Tx, spaces: LockSpaces, table: PruneTable, ids: number[], before: number): Promise<number> {
  switch (table) {
    case 'messages': {
      const locked = await tx.rows<{ seq: number }>(LOCK_MESSAGES_SQL, [ids]);
      if (locked.length === 0) return 0;
      return (await tx.row<{ n: number }>(DELETE_MESSAGES_SQL, [before, locked.map((r) => r.seq)]))?.n ?? 0;
    }
    case 'batches': {
      const locked = await tx.rows<{ id: number }>(LOCK_BATCHES_SQL, [ids, spaces.batch]);
      if (locked.length === 0) return 0;
      return (await tx.row<{ n: number }>(DELETE_BATCHES_SQL, [locked.map((r) => r.id)]))?.n ?? 0;
    }
    case 'inbound':
      return (await tx.row<{ n: number }>(DELETE_INBOUND_SQL, [ids]))?.n ?? 0;
  }
}
