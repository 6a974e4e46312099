/**
 * How a part's status changes and what that does to its message, decided once for both stores
 * over the rows in memory (no I/O): the part merges the new status; the message takes the
 * aggregate of its parts (merged the same way, so a message reports one final status only),
 * counts as processed in its batch once, and each change of its status is one outbox event
 * naming the part that caused it. Each store reads the rows, calls these, and writes back what
 * they changed.
 */
import { aggregateStatus, isFinal, mergeStatus, type DeliveryStatus, type MergeResult } from '../../sms/status.js';
import type { StatusEventPayload } from '../event-payloads.js';
import type { MessageState, PartStatusRow } from '../rows.js';
import { changeEvent, messageReason } from '../status-events.js';

/**
 * Merges `incoming` into the part's status (never backwards, first final wins, READ after
 * DELIVERED); when it moves, the part's reason becomes `reason`. Returns the merge.
 */
export function mergePartStatus(part: Pick<PartStatusRow, 'status' | 'reason'>, incoming: DeliveryStatus, reason: string | null): MergeResult {
  const merged = mergeStatus(part.status, incoming);
  if (merged.changed) {
    part.status = merged.status;
    part.reason = reason;
  }
  return merged;
}

/** What caused a change: the part, and the receipt when a receipt did. */
export interface StatusCause {
  part: number;
  receipt: Record<string, unknown> | null;
}

/** What settling a message decided; the message row in memory holds its new values. */
export interface Settlement {
  /** Whether the message's status moved. */
  changed: boolean;
  /** The batch that counts the message as processed now (it has just become so), or null. */
  countIn: number | null;
  /** The outbox event of the change: only when the status moved, the cause is one of its parts and the message has events. */
  event: StatusEventPayload | null;
  /** When it happened: the change's time, never before the message's last change. */
  at: number;
  /** Whether the message has just reached its first final status (READ after DELIVERED is not one): its record is queued. */
  becameFinal: boolean;
}

/**
 * After a part changed: recomputes the message's status from its parts, and its reason,
 * `processed` and `updated_at`, onto `state.message`. The message is processed once it has a
 * final status or every part is done; it never goes back.
 */
export function settleMessage(state: MessageState, cause: StatusCause, changedAt: number): Settlement {
  const { message, parts } = state;
  // A message's changes are never dated before its last one: a part's change may carry an
  // earlier time than another part's change recorded before it.
  const at = Math.max(changedAt, message.updated_at);
  const wasFinal = isFinal(message.status);
  const merged = mergeStatus(message.status, aggregateStatus(parts.map((p) => p.status)));
  const causePart = parts.find((p) => p.part === cause.part);
  const processed = isFinal(merged.status) || parts.every((p) => p.state === 'done');
  const reason = merged.changed ? messageReason(merged.status, causePart, parts) : message.reason;
  const countIn = processed && message.processed === 0 ? message.batch_id : null;
  message.status = merged.status;
  message.reason = reason;
  message.processed = processed || message.processed === 1 ? 1 : 0;
  message.updated_at = at;
  const event = merged.changed && causePart && message.events === 1
    ? changeEvent(message, merged.status, reason, causePart, parts.length, cause.receipt, at)
    : null;
  return { changed: merged.changed, countIn, event, at, becameFinal: !wasFinal && isFinal(merged.status) };
}

/**
 * Ends a part with a local final decision (expired, aborted, cancelled, uncertain): FAILED with
 * `reason` where the merge allows (a part DELIVERED or REJECTED keeps its status and reason), done.
 */
export function failPart(part: Pick<PartStatusRow, 'state' | 'status' | 'reason' | 'updated_at'>, reason: string, now: number): void {
  mergePartStatus(part, 'FAILED', reason);
  part.state = 'done';
  part.updated_at = now;
}
