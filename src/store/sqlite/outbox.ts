/**
 * Outbox rows: the events the webhook dispatcher will push, written in the same transaction as
 * the change they report, so a committed change always has its event and an event never reports
 * a change that rolled back. Payloads follow the messaging service's event shape (API §6.4).
 */
import type { InboundRecord } from '../store.js';
import type { DeliveryStatus } from '../../sms/status.js';
import type { Sql } from './sql.js';

/** The JSON of a status event (outbox kind 'status'). */
export interface StatusEventPayload {
  messageId: string;
  channel: 'sms';
  destination: string;
  /** The message's status after the change. */
  status: DeliveryStatus;
  /** ISO 8601 UTC of the change. */
  timestamp: string;
  reason: string | null;
  batchId: number | null;
  /** The part whose change moved the message. */
  part: { part: number; status: DeliveryStatus; smscMessageId: string | null };
  /** The SMSC id of that part. */
  smscMessageId: string | null;
  /** The receipt that caused the change, as read; null for a submit outcome or a local decision. */
  receipt: Record<string, unknown> | null;
}

/** The JSON of an inbound event (outbox kind 'inbound'). */
export interface InboundEventPayload {
  type: 'inbound';
  source: string;
  destination: string;
  text: string;
  /** ISO 8601 UTC. */
  receivedAt: string;
}

const INSERT = `INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, next_attempt_at)
  VALUES (?, ?, ?, ?, ?, ?, ?)`;

export function writeStatusEvent(
  sql: Sql,
  route: { client: string; upstream: string },
  payload: StatusEventPayload,
  now: number,
): void {
  sql.run(INSERT, 'status', payload.messageId, route.client, route.upstream, JSON.stringify(payload), now, now);
}

export function recordInbound(sql: Sql, inbound: InboundRecord): void {
  sql.run(
    `INSERT INTO inbound (upstream, source, destination, text, data_coding, parts, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    inbound.upstream, inbound.source, inbound.destination, inbound.text, inbound.dataCoding, inbound.parts, inbound.receivedAt,
  );
  const payload: InboundEventPayload = {
    type: 'inbound',
    source: inbound.source,
    destination: inbound.destination,
    text: inbound.text,
    receivedAt: isoTime(inbound.receivedAt),
  };
  sql.run(INSERT, 'inbound', null, null, inbound.upstream, JSON.stringify(payload), inbound.receivedAt, inbound.receivedAt);
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
