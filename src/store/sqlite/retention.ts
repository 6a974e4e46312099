/**
 * The retention sweep (`Store.pruneFinished`; the walk: `../rules/retention.ts`). One call is one
 * operation of the group commit: it looks at `limit` rows at most, so the writes that share its
 * transaction wait for a few milliseconds, never for a long delete.
 *
 * Each window is read in two index ranges: the rest of the cursor's millisecond (`time = ? AND
 * rowid > ?`), then the later milliseconds up to the cutoff. SQLite does not seek an index by a
 * row value (`(time, rowid) > (?, ?)`): it would seek by the time alone and pass again every row of
 * the cursor's millisecond (a bulk accept gives thousands of messages one `created_at`).
 */
import type { PruneCounts, PruneCursor, PruneTable } from '../retention.js';
import { afterWindow, beginPrune, receiptNoLongerExpected, type PruneWindow } from '../rules/retention.js';
import type { Sql } from './sql.js';

interface WindowRow {
  at: number;
  id: number;
  finished: 0 | 1;
}

interface TableWalk {
  /** Finished rows of the table, by id: `@at`, `@id`, `@before`, `@limit`. */
  tie: string;
  later: string;
  /** Statements that delete the finished rows, in order (children first); `?` is a JSON array of ids. */
  deletes: readonly string[];
}

/**
 * A message is finished when it has not changed since the cutoff, no receipt can still come for it
 * (`receiptNoLongerExpected`), all its parts are done, it has no event in the outbox: waiting
 * (pending, blocked) or dead (kept, listable, re-sendable), and its record (if any) has been
 * written (`message-records.ts`: the record reads its message when it is taken).
 */
const MESSAGE_FINISHED = `m.updated_at < @before
    AND ${receiptNoLongerExpected('@before')}
    AND NOT EXISTS (SELECT 1 FROM parts p WHERE p.message_id = m.id AND p.state != 'done')
    AND NOT EXISTS (SELECT 1 FROM outbox o INDEXED BY outbox_live WHERE o.message_id = m.id AND o.state IN ('pending', 'blocked'))
    AND NOT EXISTS (SELECT 1 FROM outbox o INDEXED BY outbox_message_dead WHERE o.message_id = m.id AND o.state = 'dead')
    AND NOT EXISTS (SELECT 1 FROM message_records q INDEXED BY message_records_message WHERE q.message_id = m.id)`;
const MESSAGE_WINDOW = `SELECT m.created_at AS at, m.seq AS id, (${MESSAGE_FINISHED}) AS finished FROM messages m INDEXED BY messages_created`;

/** A batch is finished when no message is left in it and its schedule (if any) is no longer waiting. */
const BATCH_FINISHED = `NOT EXISTS (SELECT 1 FROM messages m WHERE m.batch_id = b.id)
    AND NOT EXISTS (SELECT 1 FROM schedules s WHERE s.batch_id = b.id AND s.state = 'scheduled')`;
const BATCH_WINDOW = `SELECT b.created_at AS at, b.id AS id, (${BATCH_FINISHED}) AS finished FROM batches b INDEXED BY batches_created`;

/** An inbound message is finished when its event (if it had one) has left the outbox. */
const INBOUND_WINDOW = `SELECT i.received_at AS at, i.id AS id,
    (NOT EXISTS (SELECT 1 FROM outbox o INDEXED BY outbox_inbound WHERE o.inbound_id = i.id)) AS finished
  FROM inbound i INDEXED BY inbound_received`;

const IDS = '(SELECT value FROM json_each(?))';
const MESSAGE_IDS_SQL = `SELECT id FROM messages WHERE seq IN ${IDS}`;

export const PRUNE_SQL: Readonly<Record<PruneTable, TableWalk>> = {
  messages: {
    tie: `${MESSAGE_WINDOW} WHERE m.created_at = @at AND m.seq > @id AND m.created_at < @before ORDER BY m.seq LIMIT @limit`,
    later: `${MESSAGE_WINDOW} WHERE m.created_at > @at AND m.created_at < @before ORDER BY m.created_at, m.seq LIMIT @limit`,
    deletes: [
      `DELETE FROM receipts WHERE message_id IN (SELECT id FROM messages WHERE seq IN ${IDS})`,
      `DELETE FROM parts WHERE message_id IN (SELECT id FROM messages WHERE seq IN ${IDS})`,
      `DELETE FROM event_deliveries WHERE message_id IN (SELECT id FROM messages WHERE seq IN ${IDS})`,
      `DELETE FROM messages WHERE seq IN ${IDS}`,
    ],
  },
  batches: {
    tie: `${BATCH_WINDOW} WHERE b.created_at = @at AND b.id > @id AND b.created_at < @before ORDER BY b.id LIMIT @limit`,
    later: `${BATCH_WINDOW} WHERE b.created_at > @at AND b.created_at < @before ORDER BY b.created_at, b.id LIMIT @limit`,
    deletes: [`DELETE FROM schedules WHERE batch_id IN ${IDS}`, `DELETE FROM batches WHERE id IN ${IDS}`],
  },
  inbound: {
    tie: `${INBOUND_WINDOW} WHERE i.received_at = @at AND i.id > @id AND i.received_at < @before ORDER BY i.id LIMIT @limit`,
    later: `${INBOUND_WINDOW} WHERE i.received_at > @at AND i.received_at < @before ORDER BY i.received_at, i.id LIMIT @limit`,
    deletes: [`DELETE FROM inbound WHERE id IN ${IDS}`],
  },
};

export function pruneFinished(sql: Sql, before: number, limit: number, after?: PruneCursor | null): PruneCounts {
  const call = beginPrune(limit, after);
  for (;;) {
    const done = afterWindow(call, pruneWindow(sql, call.cursor, before, call.budget));
    if (done) return done;
  }
}

/** Looks at up to `limit` rows of the cursor's table after the cursor, and deletes the finished ones. */
function pruneWindow(sql: Sql, cursor: PruneCursor, before: number, limit: number): PruneWindow {
  const walk = PRUNE_SQL[cursor.table];
  const rows = sql.all<WindowRow>(walk.tie, { at: cursor.at, id: cursor.id, before, limit });
  if (rows.length < limit) rows.push(...sql.all<WindowRow>(walk.later, { at: cursor.at, before, limit: limit - rows.length }));
  const finished = rows.filter((r) => r.finished === 1).map((r) => r.id);
  if (finished.length > 0) {
    const ids = JSON.stringify(finished);
    // A deleted message must not be found in memory (a SENT one whose receipt never came may be kept).
    if (cursor.table === 'messages') for (const m of sql.all<{ id: string }>(MESSAGE_IDS_SQL, ids)) sql.statuses.forget(m.id);
    for (const statement of walk.deletes) sql.run(statement, ids);
  }
  return { looked: rows.length, last: rows.at(-1), deleted: finished.length };
}
