/**
 * How a part's status change is read and written in this store: the rules (`../rules/part-status.ts`)
 * decide over the message and its parts in memory; the functions here load them and write back
 * what changed, with the message's outbox event and its batch's count.
 */
import { isFinal } from '../../sms/status.js';
import { failPart, settleMessage as settleRules, type StatusCause } from '../rules/part-status.js';
import type { MessageRow, MessageState, MessageStatusRow, PartRow, PartStatusRow } from '../rows.js';
import { queueRecord } from './message-records.js';
import { writeStatusEvent } from './outbox.js';
import type { Sql } from './sql.js';

export const PART_SELECT = 'SELECT * FROM parts';

/** The columns of `PartStatusRow`: every status change (submit outcomes, receipts, local failures) works on these. */
export const PART_STATUS_SELECT = `SELECT message_id, part, upstream, batch_id, state, status, smsc_id, match_key, bind, attempts, reason,
  updated_at FROM parts`;

const MESSAGE_STATUS_SQL = 'SELECT id, client, upstream, batch_id, destination, status, reason, processed, events, updated_at FROM messages WHERE id = ?';
const MESSAGE_PARTS_SQL = `${PART_STATUS_SELECT} WHERE message_id = ? ORDER BY part`;
const LOAD_PART_SQL = `${PART_SELECT} WHERE message_id = ? AND part = ?`;
const LOAD_MESSAGE_SQL = 'SELECT * FROM messages WHERE id = ?';
const UPDATE_MESSAGE_SQL = 'UPDATE messages SET status = ?, reason = ?, processed = ?, updated_at = ? WHERE id = ?';
const COUNT_PROCESSED_SQL = 'UPDATE batches SET processed = processed + 1, updated_at = ? WHERE id = ?';

export function loadPart(sql: Sql, messageId: string, part: number): PartRow | undefined {
  return sql.get<PartRow>(LOAD_PART_SQL, messageId, part);
}

export function loadMessage(sql: Sql, messageId: string): MessageRow | undefined {
  return sql.get<MessageRow>(LOAD_MESSAGE_SQL, messageId);
}

/**
 * A message and its parts (status columns only), as settling it needs them; undefined when the
 * message is unknown. The objects are the cached ones (`sql.statuses`) unless the message is
 * final: a caller that changes a status row writes the change onto them too, or forgets the message.
 */
export function loadMessageState(sql: Sql, messageId: string): MessageState | undefined {
  const cached = sql.statuses.get(messageId);
  if (cached) return cached;
  const message = sql.get<MessageStatusRow>(MESSAGE_STATUS_SQL, messageId);
  if (!message) return undefined;
  const state = { message, parts: sql.all<PartStatusRow>(MESSAGE_PARTS_SQL, messageId) };
  // A final message changes again only by a late receipt (READ after DELIVERED): not kept.
  if (!isFinal(message.status)) sql.statuses.put(state);
  return state;
}

/**
 * After a part changed (and was written): loads its message, settles it and writes what that
 * changed. Returns whether the message's status changed.
 */
export function settleMessage(sql: Sql, messageId: string, cause: StatusCause, now: number): boolean {
  const state = loadMessageState(sql, messageId);
  if (!state) return false;
  return settleLoaded(sql, state, cause, now);
}

/**
 * `settleMessage` on a message and parts already in memory, as they are in the database now;
 * `state.message` holds what it writes, so the caller can settle it again after another change.
 */
export function settleLoaded(sql: Sql, state: MessageState, cause: StatusCause, changedAt: number): boolean {
  const settled = settleRules(state, cause, changedAt);
  const { message } = state;
  sql.run(UPDATE_MESSAGE_SQL, message.status, message.reason, message.processed, message.updated_at, message.id);
  if (settled.countIn !== null) sql.run(COUNT_PROCESSED_SQL, settled.at, settled.countIn);
  if (settled.event) writeStatusEvent(sql, message, settled.event, settled.at);
  if (settled.becameFinal) queueRecord(sql, message, settled.at);
  // Final now: no longer kept (`loadMessageState`).
  if (isFinal(message.status)) sql.statuses.forget(message.id);
  return settled.changed;
}

const FAIL_PART_SQL = "UPDATE parts SET state = 'done', status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?";

/**
 * Ends parts with a local final decision (`failPart`) and writes them; then each message settles
 * once, its first ended part as the cause. Returns how many parts it ended.
 */
export function failParts(sql: Sql, parts: readonly PartStatusRow[], reason: string, now: number): number {
  const firstByMessage = new Map<string, number>();
  for (const part of parts) {
    // These rows were read apart from the message's cached ones, which would go stale.
    sql.statuses.forget(part.message_id);
    failPart(part, reason, now);
    sql.run(FAIL_PART_SQL, part.status, part.reason, now, part.message_id, part.part);
    if (!firstByMessage.has(part.message_id)) firstByMessage.set(part.message_id, part.part);
  }
  for (const [messageId, part] of firstByMessage) settleMessage(sql, messageId, { part, receipt: null }, now);
  return parts.length;
}
