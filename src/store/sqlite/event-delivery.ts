/**
 * The outbox's side that the webhook dispatcher drives: claiming due events (only the oldest
 * undelivered event of each message, so a message's events go out in order), settling them,
 * dead events, and the re-push of `POST /sms/resendDlr`. Delivered events are deleted: the
 * outbox holds what is still to deliver, and the dead. A delivered event of a message is logged
 * in `event_deliveries` as it is deleted (`../rules/event-deliveries.ts`), for its story.
 */
import type { DeadEvent, ResendFilter, ResentDeadEvents } from '../event-resends.js';
import type { EventOutcome, OutboxDepth, OutboxEvent, SettledEvents } from '../outbox.js';
import {
  toDeadEvent, toOutboxEvent, type DeadEventRow, type OutboxRow, type ResendMessageRow, type ResendPartRow,
} from '../rows.js';
import { resendCause, resendPage, resentEvent } from '../status-events.js';
import { deliveryOf, DELIVERED_RETURNING, type DeliveredOutboxRow } from '../rules/event-deliveries.js';
import type { Migration } from '../rules/migrations.js';
import { writeStatusEvent } from './outbox.js';
import type { Sql } from './sql.js';

/**
 * Migration 13 (listed in `migrations.ts`; never edited once released): the delivered events of
 * messages. One b-tree keyed by message (WITHOUT ROWID): a delivery costs one insert, the story
 * and the retention sweep read a range of it.
 */
export const EVENT_DELIVERIES_MIGRATION: Migration = {
  version: 13,
  name: 'event deliveries',
  sql: `
CREATE TABLE event_deliveries (
  message_id   TEXT    NOT NULL,
  event_id     INTEGER NOT NULL,
  client       TEXT,
  kind         TEXT    NOT NULL,
  status       TEXT,
  attempts     INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  delivered_at INTEGER NOT NULL,
  last_error   TEXT,
  PRIMARY KEY (message_id, event_id)
) WITHOUT ROWID;
`,
};

// Pending events are the heads of their messages (later ones wait as 'blocked'), so a claim
// reads due events only: a backlog behind a receiver that is down costs it nothing.
export const CLAIM_EVENTS_SQL = `SELECT o.id, o.kind, o.message_id, o.client, o.payload, o.created_at, o.queued_at, o.attempts
  FROM outbox o INDEXED BY outbox_due
  WHERE o.client = ? AND o.state = 'pending' AND o.next_attempt_at <= ?
  ORDER BY o.next_attempt_at, o.id LIMIT ?`;
// A lease moves the event out of the due range until it ends; lease_until marks it as leased,
// so that opening the store can give back the leases of a process that died.
const LEASE_SQL = 'UPDATE outbox SET next_attempt_at = ?, lease_until = ? WHERE id = ?';

export function claimEvents(sql: Sql, client: string, now: number, limit: number, leaseUntil: number): OutboxEvent[] {
  const rows = sql.all<OutboxRow>(CLAIM_EVENTS_SQL, client, now, limit);
  return rows.map((r) => {
    sql.run(LEASE_SQL, leaseUntil, leaseUntil, r.id);
    return toOutboxEvent(r);
  });
}

const DELETE_DELIVERED_SQL = `DELETE FROM outbox WHERE id = ? AND state = 'pending' RETURNING ${DELIVERED_RETURNING}`;
// An event is deleted once (the delete above finds it pending): a conflict cannot come, and if it
// did, the delivery must still settle.
const LOG_DELIVERED_SQL = `INSERT INTO event_deliveries (message_id, event_id, client, kind, status, attempts, created_at, delivered_at, last_error)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`;
const SUPERSEDE_SQL = "DELETE FROM outbox WHERE message_id = ? AND state = 'dead' AND id < ?";
const RETRY_SQL = `UPDATE outbox SET next_attempt_at = ?, lease_until = NULL, attempts = attempts + 1, last_error = ?
  WHERE id = ? AND state = 'pending'`;
const DEAD_SQL = `UPDATE outbox SET state = 'dead', lease_until = NULL, attempts = attempts + 1, last_error = ?, died_at = ?
  WHERE id = ? AND state = 'pending' RETURNING message_id`;
const RELEASE_SQL = "UPDATE outbox SET next_attempt_at = ?, lease_until = NULL WHERE id = ? AND state = 'pending'";
const PROMOTE_SQL = `UPDATE outbox SET state = 'pending', next_attempt_at = ?
  WHERE id = (SELECT id FROM outbox INDEXED BY outbox_live WHERE message_id = ? AND state IN ('pending', 'blocked') ORDER BY id LIMIT 1)
    AND state = 'blocked'`;

/** The message's oldest waiting event, when it is blocked, becomes pending (due at `now`). */
function promoteNext(sql: Sql, messageId: string, now: number): void {
  sql.run(PROMOTE_SQL, now, messageId);
}

export function settleEvents(sql: Sql, outcomes: readonly EventOutcome[], now: number): SettledEvents {
  let superseded = 0;
  for (const o of outcomes) {
    switch (o.kind) {
      case 'delivered': {
        const row = sql.get<DeliveredOutboxRow>(DELETE_DELIVERED_SQL, o.id);
        const logged = row === undefined ? undefined : deliveryOf(row, now);
        if (logged) {
          sql.run(LOG_DELIVERED_SQL, logged.messageId, logged.eventId, logged.client, logged.kind, logged.status, logged.attempts,
            logged.createdAt, logged.deliveredAt, logged.lastError);
        }
        if (row?.message_id) {
          // An older event of the message that died can never be sent now: it would move the
          // receiver's status back.
          superseded += sql.run(SUPERSEDE_SQL, row.message_id, o.id).changes;
          promoteNext(sql, row.message_id, now);
        }
        break;
      }
      case 'retry':
        sql.run(RETRY_SQL, o.at, o.error, o.id);
        break;
      case 'dead': {
        const row = sql.get<{ message_id: string | null }>(DEAD_SQL, o.error, now, o.id);
        if (row?.message_id) promoteNext(sql, row.message_id, now);
        break;
      }
      case 'release':
        sql.run(RELEASE_SQL, now, o.id);
        break;
    }
  }
  return { superseded };
}

/** Opening the store: a lease of the process that wrote this file before can never be settled. */
export function releaseLeases(sql: Sql, now: number): number {
  return sql.run('UPDATE outbox SET next_attempt_at = ?, lease_until = NULL WHERE lease_until IS NOT NULL', now).changes;
}

export function listDeadEvents(sql: Sql, client: string, limit: number, afterId = 0): DeadEvent[] {
  return sql.all<DeadEventRow>(
    `SELECT id, kind, message_id, payload, created_at, attempts, last_error, died_at FROM outbox INDEXED BY outbox_dead
     WHERE client = ? AND state = 'dead' AND id > ? ORDER BY id LIMIT ?`,
    client, afterId, limit,
  ).map(toDeadEvent);
}

const LATER_LIVE_SQL = `SELECT 1 FROM outbox INDEXED BY outbox_live
  WHERE message_id = ? AND state IN ('pending', 'blocked') AND id > ? LIMIT 1`;
const EARLIER_LIVE_SQL = `SELECT 1 FROM outbox INDEXED BY outbox_live
  WHERE message_id = ? AND state IN ('pending', 'blocked') AND id < ? LIMIT 1`;
const REQUEUE_SQL = `UPDATE outbox SET state = ?, queued_at = ?, next_attempt_at = ?, attempts = 0, died_at = NULL
  WHERE id = ?`;

export function resendDeadEvents(sql: Sql, client: string, ids: readonly number[] | null, now: number): ResentDeadEvents {
  const dead = ids === null
    ? sql.all<{ id: number; message_id: string | null }>(
      "SELECT id, message_id FROM outbox INDEXED BY outbox_dead WHERE client = ? AND state = 'dead' ORDER BY id", client)
    : [...new Set(ids)].flatMap((id) => sql.all<{ id: number; message_id: string | null }>(
      "SELECT id, message_id FROM outbox WHERE id = ? AND client = ? AND state = 'dead'", id, client));
  let requeued = 0;
  let superseded = 0;
  // In id order, so a message's dead events go back in the order they were written: the first
  // pending, the ones after it blocked behind it. A dead event whose message has a later event
  // still to deliver would arrive after it: it goes instead. (One whose later event was
  // delivered is gone already: settleEvents removed it.)
  for (const e of [...dead].sort((a, b) => a.id - b.id)) {
    if (e.message_id !== null && sql.get(LATER_LIVE_SQL, e.message_id, e.id) !== undefined) {
      sql.run('DELETE FROM outbox WHERE id = ?', e.id);
      superseded++;
      continue;
    }
    const behind = e.message_id !== null && sql.get(EARLIER_LIVE_SQL, e.message_id, e.id) !== undefined;
    sql.run(REQUEUE_SQL, behind ? 'blocked' : 'pending', now, now, e.id);
    requeued++;
  }
  return { requeued, superseded };
}

/**
 * Walks the client's messages in seq order (the primary key: one pass over the table for the
 * whole request, however many calls it takes) and writes a status event with each matching
 * message's current status, built from what the store holds: the part that last reached that
 * status and the last receipt of that part.
 */
export function resendStatusEvents(
  sql: Sql, filter: ResendFilter, afterSeq: number, limit: number, now: number,
): { queued: number; next: number | null } {
  const conditions = ['seq > ?', 'client = ?', 'created_at >= ?', 'created_at < ?'];
  const params: unknown[] = [afterSeq, filter.client, filter.from, filter.to];
  if (filter.senderId !== undefined) { conditions.push('source = ?'); params.push(filter.senderId); }
  if (filter.status !== undefined) { conditions.push('status = ?'); params.push(filter.status); }
  const rows = sql.all<ResendMessageRow>(
    `SELECT seq, id, client, upstream, batch_id, destination, status, reason, updated_at FROM messages
     WHERE ${conditions.join(' AND ')} ORDER BY seq LIMIT ?`,
    ...params, limit,
  );
  for (const m of rows) {
    const parts = sql.all<ResendPartRow>('SELECT part, status, smsc_id, updated_at FROM parts WHERE message_id = ? ORDER BY part', m.id);
    const cause = resendCause(m.status, parts);
    const receipt = cause === undefined ? undefined : sql.get<{ raw: string }>(
      'SELECT raw FROM receipts WHERE message_id = ? AND part = ? ORDER BY id DESC LIMIT 1', m.id, cause.part);
    const payload = resentEvent(m, cause, parts.length, receipt?.raw);
    writeStatusEvent(sql, m, payload, now);
  }
  return resendPage(rows, limit);
}

export function outboxDepth(sql: Sql): OutboxDepth[] {
  // Each count walks its partial index, not the rows (whose payloads make a table scan slow).
  // Waiting events are the due or backing-off heads and the blocked ones behind them.
  const pending = sql.all<{ client: string; n: number }>(
    "SELECT client, COUNT(*) AS n FROM outbox INDEXED BY outbox_due WHERE state = 'pending' GROUP BY client");
  const blocked = sql.all<{ client: string; n: number }>(
    "SELECT client, COUNT(*) AS n FROM outbox INDEXED BY outbox_blocked WHERE state = 'blocked' GROUP BY client");
  const dead = sql.all<{ client: string; n: number }>(
    "SELECT client, COUNT(*) AS n FROM outbox INDEXED BY outbox_dead WHERE state = 'dead' GROUP BY client");
  const byClient = new Map<string, OutboxDepth>();
  const entry = (client: string): OutboxDepth => {
    let depth = byClient.get(client);
    if (!depth) byClient.set(client, depth = { client, pending: 0, dead: 0 });
    return depth;
  };
  for (const r of pending) entry(r.client).pending += r.n;
  for (const r of blocked) entry(r.client).pending += r.n;
  for (const r of dead) entry(r.client).dead = r.n;
  return [...byClient.values()].sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
}
