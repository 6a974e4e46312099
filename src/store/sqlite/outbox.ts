/**
 * Outbox rows: the events the webhook dispatcher will push, written in the same transaction as
 * the change they report, so a committed change always has its event and an event never reports
 * a change that rolled back. Payloads: `../event-payloads.ts`.
 */
import { inboundEvent, type StatusEventPayload } from '../event-payloads.js';
import type { InboundRecord } from '../inbound.js';
import { inboundRow } from '../rows.js';
import type { Sql } from './sql.js';

const INSERT = `INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
// inbound_id: the retention sweep keeps an inbound message while its event is in the outbox.
const INSERT_INBOUND = `INSERT INTO outbox (kind, inbound_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
  VALUES ('inbound', ?, ?, ?, ?, ?, ?, ?, 'pending')`;
/** Whether the message has an event still to deliver: a new one then waits behind it. */
export const HAS_LIVE_EVENT_SQL = `SELECT 1 FROM outbox INDEXED BY outbox_live
  WHERE message_id = ? AND state IN ('pending', 'blocked') LIMIT 1`;

/**
 * A status event: 'pending' (due now) when it is the message's only undelivered event, else
 * 'blocked' until the events before it are delivered or dead (`promoteNext`): a message's
 * events go out one at a time, in order.
 */
export function writeStatusEvent(
  sql: Sql,
  route: { client: string; upstream: string },
  payload: StatusEventPayload,
  now: number,
): void {
  const state = sql.get(HAS_LIVE_EVENT_SQL, payload.messageId) === undefined ? 'pending' : 'blocked';
  sql.run(INSERT, 'status', payload.messageId, route.client, route.upstream, JSON.stringify(payload), now, now, now, state);
}

/** Stores an inbound message, and its event when it is routed to a client; returns its id. */
export function recordInbound(sql: Sql, inbound: InboundRecord): number {
  const row = inboundRow(inbound);
  const stored = sql.run(
    `INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at, missing_parts, problems, raw)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    row.upstream, row.client, row.source, row.destination, row.text, row.data_coding, row.parts, row.received_at,
    row.missing_parts, row.problems, row.raw,
  );
  const id = Number(stored.lastInsertRowid);
  if (inbound.client === null || !inbound.events) return id;
  const at = inbound.receivedAt;
  sql.run(INSERT_INBOUND, id, inbound.client, inbound.upstream, JSON.stringify(inboundEvent(id, inbound)), at, at, at);
  return id;
}
