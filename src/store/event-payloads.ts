/**
 * The outbox's payloads, as both stores write them: the JSON bodies the webhook dispatcher
 * pushes (the messaging service's event shape, API §6.4), sent as stored.
 */
import type { DeliveryStatus } from '../sms/status.js';
import type { InboundRecord } from './inbound.js';

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
  /** Decoded by data_coding (binary data: lowercase hex); a best effort when `malformed`. */
  text: string;
  /** ISO 8601 UTC. */
  receivedAt: string;
  /** Parts it arrived in. */
  parts: number;
  /** Parts that never came (sequence numbers): it was stored after waiting for them. Empty when whole. */
  missingParts: number[];
  /** SMPP data_coding of its (first) part. */
  dataCoding: number;
  /** True when its bytes could not be decoded cleanly (`problems` says how): `text` is then a best effort, `userData` the bytes. */
  malformed: boolean;
  /** `DecodeProblem` codes, empty unless `malformed`. */
  problems: string[];
  /** With `malformed`: the user data as it came (UDHs removed where they could be read), lowercase hex; else null. */
  userData: string | null;
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The event of an inbound message stored under `inboundId`. */
export function inboundEvent(inboundId: number, inbound: InboundRecord): InboundEventPayload {
  const problems = [...(inbound.problems ?? [])];
  return {
    type: 'inbound',
    channel: 'sms',
    inboundId,
    source: inbound.source,
    destination: inbound.destination,
    text: inbound.text,
    receivedAt: isoTime(inbound.receivedAt),
    parts: inbound.parts,
    missingParts: [...(inbound.missingParts ?? [])],
    dataCoding: inbound.dataCoding,
    malformed: problems.length > 0,
    problems,
    userData: problems.length > 0 && inbound.raw ? Buffer.from(inbound.raw).toString('hex') : null,
  };
}
