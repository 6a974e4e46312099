/**
 * The pure parts of status events that both stores build the same way: the reason a message
 * carries, the event of a new message, of a change, and the event a resendDlr re-pushes. SQL
 * stays in each store.
 */
import type { DeliveryStatus } from '../sms/status.js';
import { isoTime, type StatusEventPayload } from './event-payloads.js';
import type { NewMessage } from './intake.js';

interface PartStatus {
  part: number;
  status: DeliveryStatus;
  reason: string | null;
  smsc_id: string | null;
}

/** A FAILED or REJECTED message carries the reason of the part that made it so; others none. */
export function messageReason(status: DeliveryStatus, cause: Pick<PartStatus, 'status' | 'reason'> | undefined, parts: ReadonlyArray<Pick<PartStatus, 'status' | 'reason'>>): string | null {
  if (status !== 'FAILED' && status !== 'REJECTED') return null;
  if (cause?.status === status) return cause.reason;
  return parts.find((p) => p.status === status)?.reason ?? null;
}

interface MessageFields {
  id: string;
  destination: string;
  batch_id: number | null;
}

/** A status event of `message`: its status and reason as given, `cause` the part it names (none for SUBMITTED). */
function statusEvent(
  message: MessageFields, status: DeliveryStatus, reason: string | null, cause: Omit<PartStatus, 'reason'> | undefined, parts: number,
  receipt: Record<string, unknown> | null, at: number,
): StatusEventPayload {
  return {
    type: 'status',
    messageId: message.id,
    channel: 'sms',
    destination: message.destination,
    status,
    timestamp: isoTime(at),
    reason,
    batchId: message.batch_id,
    part: cause ? { part: cause.part, status: cause.status, smscMessageId: cause.smsc_id } : null,
    parts,
    smscMessageId: cause?.smsc_id ?? null,
    receipt,
  };
}

/** The SUBMITTED event of a message just accepted (no part names it: the whole message was stored). */
export function submittedEvent(m: Pick<NewMessage, 'id' | 'destination'> & { parts: { length: number } }, batchId: number | null, at: number): StatusEventPayload {
  return statusEvent({ id: m.id, destination: m.destination, batch_id: batchId }, 'SUBMITTED', null, undefined, m.parts.length, null, at);
}

/** The event of a change of the message's status, `cause` the part whose change moved it. */
export function changeEvent(
  message: MessageFields, status: DeliveryStatus, reason: string | null, cause: Omit<PartStatus, 'reason'>, parts: number,
  receipt: Record<string, unknown> | null, at: number,
): StatusEventPayload {
  return statusEvent(message, status, reason, cause, parts, receipt, at);
}

/** resendDlr: the part that last reached the message's status (none for SUBMITTED). */
export function resendCause<P extends { status: DeliveryStatus; updated_at: number }>(status: DeliveryStatus, parts: readonly P[]): P | undefined {
  if (status === 'SUBMITTED') return undefined;
  return parts.filter((p) => p.status === status).sort((a, b) => b.updated_at - a.updated_at)[0] ?? parts[0];
}

/** resendDlr: the message's current status again, with that part and its last receipt. */
export function resentEvent(
  message: MessageFields & { status: DeliveryStatus; reason: string | null; updated_at: number },
  cause: Omit<PartStatus, 'reason'> | undefined, parts: number, receiptRaw: string | undefined,
): StatusEventPayload {
  const receipt = receiptRaw === undefined ? null : (JSON.parse(receiptRaw) as Record<string, unknown>);
  return { ...statusEvent(message, message.status, message.reason, cause, parts, receipt, message.updated_at), resent: true };
}

/** resendDlr: how many messages a call queued, and the cursor of the next call (null: the filter is exhausted). */
export function resendPage(rows: ReadonlyArray<{ seq: number }>, limit: number): { queued: number; next: number | null } {
  const last = rows.at(-1);
  return { queued: rows.length, next: rows.length === limit && last ? last.seq : null };
}
