/**
 * The outbox's side that the webhook dispatchers of every instance drive, as in the SQLite store
 * (`../sqlite/event-delivery.ts`): claiming due events (only the oldest undelivered event of each
 * message), settling them, dead events, and the re-push of `POST /sms/resendDlr`. Delivered
 * events are deleted, those of a message logged in `event_deliveries` for its story
 * (`../rules/event-deliveries.ts`).
 *
 * A message's oldest undelivered event is 'pending', the later ones wait as 'blocked' and are
 * promoted when the one before is delivered or dies; everything that adds, promotes or removes a
 * message's events holds the message's row lock, so across instances a message has one head at
 * most. A claim reads due pending events only (no look at the others: a backlog behind a
 * receiver that is down costs it nothing), skips those another instance's claim has locked
 * (FOR UPDATE SKIP LOCKED) and leases what it takes, so each event goes to one instance at a time.
 * The events an instance that is gone had leased go back to the others after the store's lease
 * (`ABANDONED_EVENTS_SQL`), not after the longer lease of their delivery.
 */
import type { DeadEvent, ResendFilter, ResentDeadEvents } from '../event-resends.js';
import type { EventOutcome, OutboxEvent, SettledEvents } from '../outbox.js';
import {
  toDeadEvent, toOutboxEvent, type DeadEventRow, type OutboxRow, type ResendMessageRow, type ResendPartRow,
} from '../rows.js';
import { deliveryOf, DELIVERED_RETURNING, type DeliveredOutboxRow, type EventDelivery } from '../rules/event-deliveries.js';
import type { Migration } from '../rules/migrations.js';
import { resendCause, resendPage, resentEvent } from '../status-events.js';
import type { Queryable, Tx } from './db.js';
import { liveInstancesSql } from './locks.js';

/**
 * Migration 13, as the SQLite store's version 13. Its primary key is its one index: a delivery
 * costs one insert into it, the story and the retention sweep read a message's range of it. No
 * foreign key: a log row is written under its message's row lock, which the sweep takes (SKIP
 * LOCKED) before it deletes the message and its log.
 */
export const PG_EVENT_DELIVERIES_MIGRATION: Migration = {
  version: 13,
  name: 'event deliveries',
  sql: `
CREATE TABLE event_deliveries (
  message_id   TEXT    NOT NULL,
  event_id     BIGINT  NOT NULL,
  client       TEXT,
  kind         TEXT    NOT NULL,
  status       TEXT,
  attempts     INTEGER NOT NULL,
  created_at   BIGINT  NOT NULL,
  delivered_at BIGINT  NOT NULL,
  last_error   TEXT,
  PRIMARY KEY (message_id, event_id)
);
`,
};

export const CLAIM_EVENTS_SQL = `WITH picked AS (
    SELECT o.id, o.next_attempt_at AS due FROM outbox o
    WHERE o.client = $1 AND o.state = 'pending' AND o.next_attempt_at <= $2
    ORDER BY o.next_attempt_at, o.id LIMIT $3
    FOR UPDATE SKIP LOCKED
  )
  UPDATE outbox o SET next_attempt_at = $4::bigint, lease_until = LEAST($4::bigint, $6::bigint), leased_by = $5 FROM picked WHERE o.id = picked.id
  RETURNING o.id, o.kind, o.message_id, o.client, o.payload, o.created_at, o.queued_at, o.attempts, picked.due`;

/**
 * A claim moves the event out of the due range until `leaseUntil` (the delivery's own lease:
 * the time it may take). What it holds against the others if this instance is gone is shorter,
 * `takeoverAt` (the store's lease, renewed while it runs: `lease_until`); `leased_by` lets a
 * restart of the same instance give its leases back.
 */
export async function claimEvents(
  db: Queryable, instanceId: string, client: string, now: number, limit: number, leaseUntil: number, takeoverAt: number,
): Promise<OutboxEvent[]> {
  if (limit <= 0) return [];
  const rows = await db.rows<OutboxRow & { due: number }>(CLAIM_EVENTS_SQL, [client, now, Math.floor(limit), leaseUntil, instanceId, takeoverAt]);
  rows.sort((a, b) => a.due - b.due || a.id - b.id);
  return rows.map(toOutboxEvent);
}

// The messages of the events that leave the queue (delivered, dead): locked first, as by every
// writer of their events, so promoting the next one cannot race a new event being added.
const LOCK_MESSAGES_SQL = `SELECT 1 FROM messages WHERE id IN (
    SELECT message_id FROM outbox WHERE id = ANY($1::bigint[]) AND message_id IS NOT NULL) ORDER BY seq FOR UPDATE`;
const DELETE_DELIVERED_SQL = `DELETE FROM outbox WHERE id = ANY($1::bigint[]) AND state = 'pending' RETURNING ${DELIVERED_RETURNING}`;
/**
 * The delivered events of messages (`$1` their messages, `$2` their ids), in one statement: logged
 * for their messages' stories, and each message's older dead events deleted. An event is deleted
 * once (the delete above finds it pending): a conflict cannot come, and if it did, the delivery
 * must still settle. Each message's dead events are probed by key (outbox_message_dead): OFFSET 0
 * keeps the lateral read per message, which the planner would otherwise join to every dead event
 * of the outbox (all of them, after a receiver's outage) while the table has no statistics.
 */
export const LOG_AND_SUPERSEDE_SQL = `WITH logged AS (
    INSERT INTO event_deliveries (message_id, event_id, client, kind, status, attempts, created_at, delivered_at, last_error)
    SELECT l.message_id, l.event_id, l.client, l.kind, l.status, l.attempts, l.created_at, $9, l.last_error
    FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[])
      AS l(message_id, event_id, client, kind, status, attempts, created_at, last_error)
    ON CONFLICT DO NOTHING)
  DELETE FROM outbox o USING (
    SELECT x.id FROM unnest($1::text[], $2::bigint[]) AS d(message_id, id)
    CROSS JOIN LATERAL (SELECT e.id FROM outbox e WHERE e.message_id = d.message_id AND e.state = 'dead' AND e.id < d.id OFFSET 0) x
  ) AS older WHERE o.id = older.id`;

function logAndSupersedeParams(logged: readonly EventDelivery[], now: number): unknown[] {
  return [
    logged.map((l) => l.messageId), logged.map((l) => l.eventId), logged.map((l) => l.client), logged.map((l) => l.kind),
    logged.map((l) => l.status), logged.map((l) => l.attempts), logged.map((l) => l.createdAt), logged.map((l) => l.lastError), now,
  ];
}
// A stale outcome (this instance's lease ended and another instance has claimed the event since)
// leaves the other instance's lease alone; a delivery is good news from anyone.
const MINE = '(leased_by IS NULL OR leased_by = $2)';
const RETRY_SQL = `UPDATE outbox o SET next_attempt_at = u.at, lease_until = NULL, leased_by = NULL, attempts = attempts + 1, last_error = u.error
  FROM unnest($1::bigint[], $3::bigint[], $4::text[]) AS u(id, at, error) WHERE o.id = u.id AND o.state = 'pending' AND ${MINE}`;
const DEAD_SQL = `UPDATE outbox o SET state = 'dead', lease_until = NULL, leased_by = NULL, attempts = attempts + 1, last_error = u.error, died_at = $3
  FROM unnest($1::bigint[], $4::text[]) AS u(id, error) WHERE o.id = u.id AND o.state = 'pending' AND ${MINE}
  RETURNING o.message_id`;
const RELEASE_SQL = `UPDATE outbox SET next_attempt_at = $3, lease_until = NULL, leased_by = NULL
  WHERE id = ANY($1::bigint[]) AND state = 'pending' AND ${MINE}`;
/** Each message's oldest waiting event, when it is blocked, becomes pending (due at `$2`). */
const PROMOTE_SQL = `UPDATE outbox o SET state = 'pending', next_attempt_at = $2
  FROM (SELECT DISTINCT ON (message_id) id, state FROM outbox
    WHERE message_id = ANY($1::text[]) AND state IN ('pending', 'blocked') ORDER BY message_id, id) AS head
  WHERE o.id = head.id AND head.state = 'blocked'`;

/** Each kind of outcome in one statement. */
export async function settleEvents(tx: Tx, instanceId: string, outcomes: readonly EventOutcome[], now: number): Promise<SettledEvents> {
  const delivered: number[] = [];
  const retry: Array<Extract<EventOutcome, { kind: 'retry' }>> = [];
  const dead: Array<Extract<EventOutcome, { kind: 'dead' }>> = [];
  const release: number[] = [];
  for (const o of outcomes) {
    switch (o.kind) {
      case 'delivered': delivered.push(o.id); break;
      case 'retry': retry.push(o); break;
      case 'dead': dead.push(o); break;
      case 'release': release.push(o.id); break;
    }
  }
  const leaving = [...delivered, ...dead.map((o) => o.id)];
  if (leaving.length > 0) await tx.run(LOCK_MESSAGES_SQL, [leaving]);
  const moved = new Set<string>();
  let superseded = 0;
  if (delivered.length > 0) {
    const logged = (await tx.rows<DeliveredOutboxRow>(DELETE_DELIVERED_SQL, [delivered]))
      .flatMap((r) => deliveryOf(r, now) ?? []);
    // An older event of the message that died can never be sent now: it would move the receiver's status back.
    if (logged.length > 0) superseded = await tx.run(LOG_AND_SUPERSEDE_SQL, logAndSupersedeParams(logged, now));
    for (const l of logged) moved.add(l.messageId);
  }
  if (retry.length > 0) await tx.run(RETRY_SQL, [retry.map((o) => o.id), instanceId, retry.map((o) => o.at), retry.map((o) => o.error)]);
  if (dead.length > 0) {
    const died = await tx.rows<{ message_id: string | null }>(DEAD_SQL, [dead.map((o) => o.id), instanceId, now, dead.map((o) => o.error)]);
    for (const r of died) if (r.message_id !== null) moved.add(r.message_id);
  }
  if (release.length > 0) await tx.run(RELEASE_SQL, [release, instanceId, now]);
  if (moved.size > 0) await tx.run(PROMOTE_SQL, [[...moved], now]);
  return { superseded };
}

/** Opening the store: the leases this instance took before a restart can never be settled. */
export async function releaseLeases(db: Queryable, instanceId: string, now: number): Promise<number> {
  return db.run('UPDATE outbox SET next_attempt_at = $2, lease_until = NULL, leased_by = NULL WHERE lease_until IS NOT NULL AND leased_by = $1', [instanceId, now]);
}

/**
 * Extends this instance's (`$1`) event leases that end before `$2` to `$3`, never past the end of
 * the delivery's own lease (when any instance may claim the event again). Events being settled are
 * skipped, not waited for (as `RENEW_LEASES_SQL` of parts). Only pending events are leased (every
 * way out of pending ends the lease), and saying so would let the planner add a read of
 * outbox_due, every pending event, to each renewal.
 */
export const RENEW_EVENT_LEASES_SQL = `UPDATE outbox o SET lease_until = LEAST($3::bigint, o.next_attempt_at) FROM (
    SELECT id FROM outbox WHERE leased_by = $1 AND lease_until IS NOT NULL AND lease_until < $2 AND lease_until < next_attempt_at
    FOR UPDATE SKIP LOCKED
  ) AS due WHERE o.id = due.id`;

export async function renewEventLeases(db: Queryable, instanceId: string, renewBefore: number, leaseUntil: number): Promise<number> {
  return db.run(RENEW_EVENT_LEASES_SQL, [instanceId, renewBefore, leaseUntil]);
}

/**
 * The events leased by instances that are gone (not this one, `$1`; lease ended before `$2`;
 * instance lock in `$3` free) become due at `$2`. Run every few seconds by every instance: it
 * costs a probe of outbox_leased per instance that holds events (a loose index scan) and reads
 * the events of gone instances only (pending ones: see `RENEW_EVENT_LEASES_SQL`). An event being
 * settled is skipped: its outcome is on its way.
 */
export const ABANDONED_EVENTS_SQL = `WITH RECURSIVE holders AS (
    (SELECT o.leased_by FROM outbox o WHERE o.lease_until IS NOT NULL AND o.leased_by IS NOT NULL ORDER BY o.leased_by LIMIT 1)
    UNION ALL
    SELECT (SELECT o.leased_by FROM outbox o WHERE o.lease_until IS NOT NULL AND o.leased_by > h.leased_by ORDER BY o.leased_by LIMIT 1)
    FROM holders h WHERE h.leased_by IS NOT NULL
  ), due AS (
    SELECT d.id FROM holders h CROSS JOIN LATERAL (
      SELECT o.id FROM outbox o WHERE o.leased_by = h.leased_by AND o.lease_until IS NOT NULL AND o.lease_until < $2
      FOR UPDATE SKIP LOCKED
    ) d
    WHERE h.leased_by <> $1 AND hashtext(h.leased_by)::oid NOT IN (${liveInstancesSql(3)})
  )
  UPDATE outbox o SET next_attempt_at = $2, lease_until = NULL, leased_by = NULL FROM due WHERE o.id = due.id`;

export async function recoverAbandonedEvents(db: Queryable, instanceId: string, now: number, instanceSpace: string): Promise<number> {
  return db.run(ABANDONED_EVENTS_SQL, [instanceId, now, instanceSpace]);
}

export async function listDeadEvents(db: Queryable, client: string, limit: number, afterId = 0): Promise<DeadEvent[]> {
  const rows = await db.rows<DeadEventRow>(
    `SELECT id, kind, message_id, payload, created_at, attempts, last_error, died_at FROM outbox
     WHERE client = $1 AND state = 'dead' AND id > $2 ORDER BY id LIMIT $3`,
    [client, afterId, limit],
  );
  return rows.map(toDeadEvent);
}

const LATER_LIVE_SQL = "SELECT 1 FROM outbox WHERE message_id = $1 AND state IN ('pending', 'blocked') AND id > $2 LIMIT 1";
const EARLIER_LIVE_SQL = "SELECT 1 FROM outbox WHERE message_id = $1 AND state IN ('pending', 'blocked') AND id < $2 LIMIT 1";
const REQUEUE_SQL = `UPDATE outbox SET state = $1, queued_at = $2, next_attempt_at = $2, attempts = 0, died_at = NULL
  WHERE id = $3`;

/**
 * Dead events back in the queue, in id order (the first pending, the ones after it blocked behind
 * it), unless a later event of their message is still to deliver: those would arrive after it,
 * and go instead. The messages' rows are locked first, as by every writer of their events.
 */
export async function resendDeadEvents(tx: Tx, client: string, ids: readonly number[] | null, now: number): Promise<ResentDeadEvents> {
  const candidates = ids === null
    ? await tx.rows<{ id: number; message_id: string | null }>(
      "SELECT id, message_id FROM outbox WHERE client = $1 AND state = 'dead' ORDER BY id", [client])
    : await tx.rows<{ id: number; message_id: string | null }>(
      "SELECT id, message_id FROM outbox WHERE id = ANY($1::bigint[]) AND client = $2 AND state = 'dead' ORDER BY id", [[...new Set(ids)], client]);
  const messages = [...new Set(candidates.flatMap((e) => (e.message_id === null ? [] : [e.message_id])))];
  if (messages.length > 0) await tx.run('SELECT 1 FROM messages WHERE id = ANY($1::text[]) ORDER BY seq FOR UPDATE', [messages]);
  // Dead still? Another instance may have resent or superseded some meanwhile.
  const dead = await tx.rows<{ id: number; message_id: string | null }>(
    "SELECT id, message_id FROM outbox WHERE id = ANY($1::bigint[]) AND state = 'dead' ORDER BY id FOR UPDATE", [candidates.map((e) => e.id)]);
  let requeued = 0;
  let superseded = 0;
  for (const e of dead) {
    if (e.message_id !== null && (await tx.row(LATER_LIVE_SQL, [e.message_id, e.id])) !== undefined) {
      await tx.run('DELETE FROM outbox WHERE id = $1', [e.id]);
      superseded++;
      continue;
    }
    const behind = e.message_id !== null && (await tx.row(EARLIER_LIVE_SQL, [e.message_id, e.id])) !== undefined;
    await tx.run(REQUEUE_SQL, [behind ? 'blocked' : 'pending', now, e.id]);
    requeued++;
  }
  return { requeued, superseded };
}

/**
 * Walks the client's messages in seq order and writes a status event with each matching
 * message's current status (its row locked, as every status event's writer does).
 */
export async function resendStatusEvents(
  tx: Tx, filter: ResendFilter, afterSeq: number, limit: number, now: number,
): Promise<{ queued: number; next: number | null }> {
  const conditions = ['seq > $1', 'client = $2', 'created_at >= $3', 'created_at < $4'];
  const params: unknown[] = [afterSeq, filter.client, filter.from, filter.to];
  if (filter.senderId !== undefined) { params.push(filter.senderId); conditions.push(`source = $${params.length}`); }
  if (filter.status !== undefined) { params.push(filter.status); conditions.push(`status = $${params.length}`); }
  params.push(limit);
  const rows = await tx.rows<ResendMessageRow>(
    `SELECT seq, id, client, upstream, batch_id, destination, status, reason, updated_at FROM messages
     WHERE ${conditions.join(' AND ')} ORDER BY seq LIMIT $${params.length} FOR UPDATE`,
    params,
  );
  for (const m of rows) {
    const parts = await tx.rows<ResendPartRow>(
      'SELECT part, status, smsc_id, updated_at FROM parts WHERE message_id = $1 ORDER BY part', [m.id]);
    const cause = resendCause(m.status, parts);
    const receipt = cause === undefined ? undefined : await tx.row<{ raw: string }>(
      'SELECT raw FROM receipts WHERE message_id = $1 AND part = $2 ORDER BY id DESC LIMIT 1', [m.id, cause.part]);
    const payload = resentEvent(m, cause, parts.length, receipt?.raw);
    tx.writes.statusEvent(m, payload, now);
  }
  return resendPage(rows, limit);
}
