/**
 * Outbox rows: the events the webhook dispatcher will push, written in the same transaction as
 * the change they report, so a committed change always has its event and an event never reports
 * a change that rolled back. Payloads follow the messaging service's event shape (API §6.4).
 */
import type { InboundRecord } from '../store.js';
import type { DeliveryStatus } from '../../sms/status.js';
import { isoTime } from '../status-events.js';
import type { Sql } from './sql.js';

export { isoTime };

/** The JSON of a status event (outbox kind 'status'). */
export interface StatusEventPayload {
  type: 'status';
  messageId: string;
  channel: 'sms';
  destination: string;
  /** The message's status after the change. */
  status: DeliveryStatus;
  /** ISO 8601 UTC of the change. */
  timestamp: string;
  reason: string | null;
  batchId: number | null;
  /** The part whose change moved the message; null for SUBMITTED (the whole message was stored). */
  part: { part: number; status: DeliveryStatus; smscMessageId: string | null } | null;
  /** How many parts the message has. */
  parts: number;
  /** The SMSC id of that part. */
  smscMessageId: string | null;
  /** The receipt that caused the change, as read; null for a submit outcome or a local decision. */
  receipt: Record<string, unknown> | null;
  /** Present (true) on an event re-pushed by POST /sms/resendDlr: the message's current status, again. */
  resent?: true;
}

/** The JSON of an inbound event (outbox kind 'inbound'). */
export interface InboundEventPayload {
  type: 'inbound';
  channel: 'sms';
  /** The stored inbound message's id: receivers deduplicate by it. */
  inboundId: number;
  source: string;
  destination: string;
  text: string;
  /** ISO 8601 UTC. */
  receivedAt: string;
}

const INSERT = `INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
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

/** Stores an inbound message, and its event when it is routed to a client. */
export function recordInbound(sql: Sql, inbound: InboundRecord): void {
  const stored = sql.run(
    `INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    inbound.upstream, inbound.client, inbound.source, inbound.destination, inbound.text, inbound.dataCoding, inbound.parts, inbound.receivedAt,
  );
  if (inbound.client === null || !inbound.events) return;
  const payload: InboundEventPayload = {
    type: 'inbound',
    channel: 'sms',
    inboundId: Number(stored.lastInsertRowid),
    source: inbound.source,
    destination: inbound.destination,
    text: inbound.text,
    receivedAt: isoTime(inbound.receivedAt),
  };
  const at = inbound.receivedAt;
  sql.run(INSERT, 'inbound', null, inbound.client, inbound.upstream, JSON.stringify(payload), at, at, at, 'pending');
}

