/**
 * How a part's status changes and what follows, as in the SQLite store (`../sqlite/part-status.ts`):
 * the part merges the new status, the message takes the aggregate of its parts, each change of
 * the message's status writes one outbox event naming the part that caused it.
 *
 * Several instances change the same message: every change takes the message's row lock and its
 * parts' (`lockMessages`, one statement), works on them in memory, and hands the rows it changed
 * to the transaction's writes (`writes.ts`). Claims lock queued parts only, never the message, so
 * a status change and a claim meet on the part rows, and the second sees what the first committed.
 */
import { aggregateStatus, isFinal, mergeStatus, type DeliveryStatus } from '../../sms/status.js';
import { changeEvent, messageReason } from '../status-events.js';
import type { Tx } from './db.js';
import { PART_STATUS_COLUMNS, type MessageState, type MessageStatusRow, type PartStatusRow } from './rows.js';

export type { MessageState, PartStatusRow } from './rows.js';

/** The columns of a message joined with its parts, prefixed m_, then the part's: what `statesOf` reads. */
export const LOCK_COLUMNS = `m.seq AS m_seq, m.id AS m_id, m.client AS m_client, m.upstream AS m_upstream, m.batch_id AS m_batch_id,
    m.destination AS m_destination, m.status AS m_status, m.reason AS m_reason, m.processed AS m_processed, m.events AS m_events,
    m.updated_at AS m_updated_at, ${PART_STATUS_COLUMNS}`;

// Each joined row locks its message (once) and then its part, in seq and part order: every
// status change takes its locks in that order. The second ANY gives parts an index condition of
// its own: a generic plan (a prepared statement run often) would otherwise hash-join a scan of parts.
export const LOCK_SQL = `SELECT ${LOCK_COLUMNS}
  FROM messages m JOIN parts p ON p.message_id = m.id
  WHERE m.id = ANY($1::text[]) AND p.message_id = ANY($1::text[])
  ORDER BY m.seq, p.part
  FOR UPDATE OF m, p`;

export type LockRow = PartStatusRow & {
  m_seq: number; m_id: string; m_client: string; m_upstream: string; m_batch_id: number | null; m_destination: string;
  m_status: DeliveryStatus; m_reason: string | null; m_processed: number; m_events: number; m_updated_at: number;
};

/** Locks messages and their parts; returns them in seq order. Unknown ids are left out. */
export async function lockMessages(tx: Tx, ids: readonly string[]): Promise<MessageState[]> {
  if (ids.length === 0) return [];
  return statesOf(await tx.rows<LockRow>(LOCK_SQL, [[...new Set(ids)]]));
}

/** Rows of LOCK_COLUMNS, ordered by message and part, as messages with their parts. */
export function statesOf(rows: readonly LockRow[]): MessageState[] {
  const states: MessageState[] = [];
  let current: MessageState | undefined;
  for (const r of rows) {
    if (current?.message.id !== r.m_id) {
      const message: MessageStatusRow = {
        seq: r.m_seq, id: r.m_id, client: r.m_client, upstream: r.m_upstream, batch_id: r.m_batch_id, destination: r.m_destination,
        status: r.m_status, reason: r.m_reason, processed: r.m_processed, events: r.m_events, updated_at: r.m_updated_at,
      };
      current = { message, parts: [] };
      states.push(current);
    }
    current.parts.push({
      message_id: r.message_id, part: r.part, message_seq: r.message_seq, upstream: r.upstream, batch_id: r.batch_id, state: r.state,
      status: r.status, smsc_id: r.smsc_id, match_key: r.match_key, bind: r.bind, attempts: r.attempts, not_before: r.not_before,
      reason: r.reason, updated_at: r.updated_at, expires_at: r.expires_at, claimed_by: r.claimed_by, lease_until: r.lease_until,
    });
  }
  return states;
}

export async function lockMessage(tx: Tx, id: string): Promise<MessageState | undefined> {
  return (await lockMessages(tx, [id]))[0];
}

/** What caused a change: the part, and the receipt when a receipt did. */
export interface StatusCause {
  part: number;
  receipt: Record<string, unknown> | null;
}

/**
 * After a part changed: recomputes the message's status from its parts, writes it and its
 * outbox event when it moved, and counts the message as processed in its batch once it has a
 * final status or every part is done. Updates `state.message`. Returns whether the status changed.
 */
export function settleLoaded(tx: Tx, state: MessageState, cause: StatusCause, changedAt: number): boolean {
  const { message, parts } = state;
  // A message's changes are never dated before its last one: a part's change may carry an
  // earlier time than another part's change recorded before it.
  const now = Math.max(changedAt, message.updated_at);
  const merged = mergeStatus(message.status, aggregateStatus(parts.map((p) => p.status)));
  const causePart = parts.find((p) => p.part === cause.part);
  const processed = isFinal(merged.status) || parts.every((p) => p.state === 'done');
  const reason = merged.changed ? messageReason(merged.status, causePart, parts) : message.reason;
  const countNow = processed && message.processed === 0;
  if (countNow && message.batch_id !== null) tx.writes.countProcessed(message.batch_id, now);
  message.status = merged.status;
  message.reason = reason;
  message.processed = processed || message.processed === 1 ? 1 : 0;
  message.updated_at = now;
  tx.writes.message(message);
  if (merged.changed && causePart && message.events === 1) {
    tx.writes.statusEvent(message, changeEvent(message, merged.status, reason, causePart, parts.length, cause.receipt, now), now);
  }
  return merged.changed;
}


/**
 * Ends parts of locked messages with a local final decision (expired, aborted, cancelled,
 * uncertain): FAILED with `reason` where the merge allows, state done; then each message settles
 * once, its first ended part as the cause. `ended` holds parts of `states` (the same objects).
 * Returns how many parts it ended.
 */
export function failLoaded(tx: Tx, states: readonly MessageState[], ended: ReadonlySet<PartStatusRow>, reason: string, now: number): number {
  let count = 0;
  for (const state of states) {
    let first: number | null = null;
    for (const p of state.parts) {
      if (!ended.has(p)) continue;
      const merged = mergeStatus(p.status, 'FAILED');
      p.status = merged.status;
      if (merged.changed) p.reason = reason;
      Object.assign(p, { state: 'done', updated_at: now, claimed_by: null, lease_until: null } satisfies Partial<PartStatusRow>);
      tx.writes.part(p);
      first ??= p.part;
      count++;
    }
    if (first !== null) settleLoaded(tx, state, { part: first, receipt: null }, now);
  }
  return count;
}

/** Locks the messages of `ids` and fails their parts that `pick` chooses (checked after the lock). */
export async function failWhere(tx: Tx, ids: readonly string[], pick: (p: PartStatusRow) => boolean, reason: string, now: number): Promise<{ parts: number; messages: number }> {
  const states = await lockMessages(tx, ids);
  const ended = new Set(states.flatMap((s) => s.parts.filter(pick)));
  const parts = failLoaded(tx, states, ended, reason, now);
  return { parts, messages: new Set([...ended].map((p) => p.message_id)).size };
}
