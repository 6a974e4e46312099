/**
 * How a part's status changes and what follows from it, in one place: the part merges the new
 * status (never backwards, first final wins, READ after DELIVERED), the message takes the
 * aggregate of its parts (merged the same way, so a message reports one final status only), and
 * each change of the message's status writes one outbox event naming the part that caused it.
 */
import { aggregateStatus, isFinal, mergeStatus, type DeliveryStatus, type MergeResult } from '../../sms/status.js';
import { changeEvent, messageReason } from '../status-events.js';
import { writeStatusEvent } from './outbox.js';
import type { MessageRow, PartRow } from './rows.js';
import type { Sql } from './sql.js';

export const PART_SELECT = 'SELECT * FROM parts';

/**
 * The columns of a part that its status changes read: no bodies, so a row costs no Buffer
 * copies. Every status change (submit outcomes, receipts, local failures) works on these.
 */
export type PartStatusRow = Pick<PartRow, 'message_id' | 'part' | 'upstream' | 'batch_id' | 'state' | 'status' | 'smsc_id' | 'reason' | 'updated_at'>;
export const PART_STATUS_SELECT = 'SELECT message_id, part, upstream, batch_id, state, status, smsc_id, reason, updated_at FROM parts';

/** The columns of a message that settling it reads and writes. */
export type MessageStatusRow = Pick<MessageRow, 'id' | 'client' | 'upstream' | 'batch_id' | 'destination' | 'status' | 'reason' | 'processed' | 'events' | 'updated_at'>;
const MESSAGE_STATUS_SQL = 'SELECT id, client, upstream, batch_id, destination, status, reason, processed, events, updated_at FROM messages WHERE id = ?';
const MESSAGE_PARTS_SQL = `${PART_STATUS_SELECT} WHERE message_id = ? ORDER BY part`;
const LOAD_PART_SQL = `${PART_SELECT} WHERE message_id = ? AND part = ?`;
const LOAD_MESSAGE_SQL = 'SELECT * FROM messages WHERE id = ?';
const UPDATE_PART_STATUS_SQL = 'UPDATE parts SET status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?';
const UPDATE_MESSAGE_SQL = 'UPDATE messages SET status = ?, reason = ?, processed = ?, updated_at = ? WHERE id = ?';
const COUNT_PROCESSED_SQL = 'UPDATE batches SET processed = processed + 1, updated_at = ? WHERE id = ?';

export function loadPart(sql: Sql, messageId: string, part: number): PartRow | undefined {
  return sql.get<PartRow>(LOAD_PART_SQL, messageId, part);
}

export function loadMessage(sql: Sql, messageId: string): MessageRow | undefined {
  return sql.get<MessageRow>(LOAD_MESSAGE_SQL, messageId);
}

/** A message and its parts (status columns only), as settling it needs them; undefined when the message is unknown. */
export interface MessageState {
  message: MessageStatusRow;
  /** Ordered by part. */
  parts: PartStatusRow[];
}

export function loadMessageState(sql: Sql, messageId: string): MessageState | undefined {
  const message = sql.get<MessageStatusRow>(MESSAGE_STATUS_SQL, messageId);
  if (!message) return undefined;
  return { message, parts: sql.all<PartStatusRow>(MESSAGE_PARTS_SQL, messageId) };
}

/**
 * Merges `incoming` into the part's status and writes it when it moved; the reason is replaced
 * with the new one. Returns the merge (the part row is not updated in memory).
 */
export function mergePartStatus(
  sql: Sql,
  part: Pick<PartRow, 'message_id' | 'part' | 'status'>,
  incoming: DeliveryStatus,
  reason: string | null,
  now: number,
): MergeResult {
  const merged = mergeStatus(part.status, incoming);
  if (merged.changed) {
    sql.run(UPDATE_PART_STATUS_SQL, merged.status, reason, now, part.message_id, part.part);
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
  const state = loadMessageState(sql, messageId);
  if (!state) return false;
  return settleLoaded(sql, state, cause, now);
}

/**
 * `settleMessage` on a message and parts already in memory, as they are in the database now;
 * updates `state.message` to what it writes, so the caller can settle it again after another change.
 */
export function settleLoaded(sql: Sql, state: MessageState, cause: StatusCause, changedAt: number): boolean {
  const { message, parts } = state;
  // A message's changes are never dated before its last one: a part's change may carry an
  // earlier time than another part's change recorded before it.
  const now = Math.max(changedAt, message.updated_at);
  const messageId = message.id;
  const merged = mergeStatus(message.status, aggregateStatus(parts.map((p) => p.status)));
  const causePart = parts.find((p) => p.part === cause.part);
  const processed = isFinal(merged.status) || parts.every((p) => p.state === 'done');

  const reason = merged.changed ? messageReason(merged.status, causePart, parts) : message.reason;
  const countNow = processed && message.processed === 0;
  const processedAfter = processed || message.processed === 1 ? 1 : 0;
  sql.run(UPDATE_MESSAGE_SQL, merged.status, reason, processedAfter, now, messageId);
  if (countNow && message.batch_id !== null) {
    sql.run(COUNT_PROCESSED_SQL, now, message.batch_id);
  }
  message.status = merged.status;
  message.reason = reason;
  message.processed = processedAfter;
  message.updated_at = now;
  if (merged.changed && causePart && message.events === 1) {
    writeStatusEvent(sql, message, changeEvent(message, merged.status, reason, causePart, parts.length, cause.receipt, now), now);
  }
  return merged.changed;
}


/**
 * Ends parts with a local final decision (expired, aborted, cancelled, uncertain): FAILED with
 * `reason` (where the merge allows), state done; then each message settles once, its first
 * ended part as the cause. Returns how many parts it ended.
 */
const FAIL_PART_SQL = "UPDATE parts SET state = 'done', status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?";

export function failParts(sql: Sql, parts: readonly PartStatusRow[], reason: string, now: number): number {
  const firstByMessage = new Map<string, number>();
  for (const part of parts) {
    const merged = mergeStatus(part.status, 'FAILED');
    sql.run(FAIL_PART_SQL,
      merged.status, merged.changed ? reason : part.reason, now, part.message_id, part.part);
    if (!firstByMessage.has(part.message_id)) firstByMessage.set(part.message_id, part.part);
  }
  for (const [messageId, part] of firstByMessage) settleMessage(sql, messageId, { part, receipt: null }, now);
  return parts.length;
}
