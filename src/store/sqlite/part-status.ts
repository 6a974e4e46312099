/**
 * How a part's status changes and what follows from it, in one place: the part merges the new
 * status (never backwards, first final wins, READ after DELIVERED), the message takes the
 * aggregate of its parts (merged the same way, so a message reports one final status only), and
 * each change of the message's status writes one outbox event naming the part that caused it.
 */
import { aggregateStatus, isFinal, mergeStatus, type DeliveryStatus, type MergeResult } from '../../sms/status.js';
import { isoTime, writeStatusEvent } from './outbox.js';
import type { MessageRow, PartRow } from './rows.js';
import type { Sql } from './sql.js';

export const PART_SELECT = 'SELECT * FROM parts';

export function loadPart(sql: Sql, messageId: string, part: number): PartRow | undefined {
  return sql.get<PartRow>(`${PART_SELECT} WHERE message_id = ? AND part = ?`, messageId, part);
}

export function loadMessage(sql: Sql, messageId: string): MessageRow | undefined {
  return sql.get<MessageRow>('SELECT * FROM messages WHERE id = ?', messageId);
}

/**
 * Merges `incoming` into the part's status and writes it when it moved; the reason is replaced
 * with the new one. Returns the merge (the part row is not updated in memory).
 */
export function mergePartStatus(
  sql: Sql,
  part: PartRow,
  incoming: DeliveryStatus,
  reason: string | null,
  now: number,
): MergeResult {
  const merged = mergeStatus(part.status, incoming);
  if (merged.changed) {
    sql.run('UPDATE parts SET status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?',
      merged.status, reason, now, part.message_id, part.part);
  }
  return merged;
}

/** What caused a change: the part, and the receipt when a receipt did. */
export interface StatusCause {
  part: number;
  receipt: Record<string, unknown> | null;
}

/**
 * After a part changed: recomputes the message's status from its parts, writes it and its
 * outbox event when it moved, and counts the message as processed in its batch once it has a
 * final status or every part is done. Returns whether the message's status changed.
 */
export function settleMessage(sql: Sql, messageId: string, cause: StatusCause, now: number): boolean {
  const message = loadMessage(sql, messageId);
  if (!message) return false;
  const parts = sql.all<PartRow>(`${PART_SELECT} WHERE message_id = ? ORDER BY part`, messageId);
  const merged = mergeStatus(message.status, aggregateStatus(parts.map((p) => p.status)));
  const causePart = parts.find((p) => p.part === cause.part);
  const processed = isFinal(merged.status) || parts.every((p) => p.state === 'done');

  const reason = merged.changed ? messageReason(merged.status, causePart, parts) : message.reason;
  const countNow = processed && message.processed === 0;
  sql.run('UPDATE messages SET status = ?, reason = ?, processed = ?, updated_at = ? WHERE id = ?',
    merged.status, reason, processed || message.processed === 1 ? 1 : 0, now, messageId);
  if (countNow && message.batch_id !== null) {
    sql.run('UPDATE batches SET processed = processed + 1, updated_at = ? WHERE id = ?', now, message.batch_id);
  }
  if (merged.changed && causePart) {
    writeStatusEvent(sql, message, {
      messageId,
      channel: 'sms',
      destination: message.destination,
      status: merged.status,
      timestamp: isoTime(now),
      reason,
      batchId: message.batch_id,
      part: { part: causePart.part, status: causePart.status, smscMessageId: causePart.smsc_id },
      smscMessageId: causePart.smsc_id,
      receipt: cause.receipt,
    }, now);
  }
  return merged.changed;
}

/** A FAILED or REJECTED message carries the reason of the part that made it so; others none. */
function messageReason(status: DeliveryStatus, cause: PartRow | undefined, parts: readonly PartRow[]): string | null {
  if (status !== 'FAILED' && status !== 'REJECTED') return null;
  if (cause?.status === status) return cause.reason;
  return parts.find((p) => p.status === status)?.reason ?? null;
}

/**
 * Ends parts with a local final decision (expired, aborted, cancelled, uncertain): FAILED with
 * `reason` (where the merge allows), state done; then each message settles once, its first
 * ended part as the cause. Returns how many parts it ended.
 */
export function failParts(sql: Sql, parts: readonly PartRow[], reason: string, now: number): number {
  const firstByMessage = new Map<string, number>();
  for (const part of parts) {
    const merged = mergeStatus(part.status, 'FAILED');
    sql.run("UPDATE parts SET state = 'done', status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?",
      merged.status, merged.changed ? reason : part.reason, now, part.message_id, part.part);
    if (!firstByMessage.has(part.message_id)) firstByMessage.set(part.message_id, part.part);
  }
  for (const [messageId, part] of firstByMessage) settleMessage(sql, messageId, { part, receipt: null }, now);
  return parts.length;
}
