/**
 * The outbox's payloads, as both stores write them: the JSON bodies the webhook dispatcher
 * pushes (the messaging service's event shape, API §6.4), sent as stored.
 */
import type { DeliveryStatus } from '../sms/status.js';
import type { InboundRecord } from './store.js';

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

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The event of an inbound message stored under `inboundId`. */
export function inboundEvent(inboundId: number, inbound: InboundRecord): InboundEventPayload {
  return {
    type: 'inbound',
    channel: 'sms',
    inboundId,
    source: inbound.source,
    destination: inbound.destination,
    text: inbound.text,
    receivedAt: isoTime(inbound.receivedAt),
  };
}
