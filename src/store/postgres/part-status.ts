/**
 * How a part's status changes and what follows, decided by the rules both stores share
 * (`../rules/part-status.ts`): the part merges the new status, the message takes the aggregate of
 * its parts, each change of the message's status writes one outbox event naming the part that
 * caused it.
 *
 * Several instances change the same message: every change takes the message's row lock and its
 * parts' (`lockMessages`, one statement), works on them in memory, and hands the rows it changed
 * to the transaction's writes (`writes.ts`). Claims lock queued parts only, never the message, so
 * a status change and a claim meet on the part rows, and the second sees what the first committed.
 */
import type { DeliveryStatus } from '../../sms/status.js';
import { failPart, settleMessage, type StatusCause } from '../rules/part-status.js';
import type { Tx } from './db.js';
import { plannedEachRun } from './statements.js';
import { PART_STATUS_COLUMNS, releaseClaim, type MessageState, type MessageStatusRow, type PartStatusRow } from './rows.js';

export type { MessageState, PartStatusRow } from './rows.js';

/** The columns of a message joined with its parts, prefixed m_, then the part's: what `statesOf` reads. */
export const LOCK_COLUMNS = `m.seq AS m_seq, m.id AS m_id, m.client AS m_client, m.upstream AS m_upstream, m.batch_id AS m_batch_id,
    m.destination AS m_destination, m.status AS m_status, m.reason AS m_reason, m.processed AS m_processed, m.events AS m_events,
    m.updated_at AS m_updated_at, ${PART_STATUS_COLUMNS}`;

// Each joined row locks its message (once) and then its part, in seq and part order: every
// status change takes its locks in that order. Planned each run (`plannedEachRun`, as the flush in
// `writes.ts`): the messages by their ids, their parts by the join.
export const LOCK_SQL = plannedEachRun(`SELECT ${LOCK_COLUMNS}
  FROM messages m JOIN parts p ON p.message_id = m.id
  WHERE m.id = ANY($1::text[])
  ORDER BY m.seq, p.part
  FOR UPDATE OF m, p`);

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

/**
 * After a part changed: settles its message (`settleMessage`, onto `state.message`) and hands the
 * message, its outbox event and its batch's count to the transaction's writes. Returns whether
 * the message's status changed.
 */
export function settleLoaded(tx: Tx, state: MessageState, cause: StatusCause, changedAt: number): boolean {
  const settled = settleMessage(state, cause, changedAt);
  if (settled.countIn !== null) tx.writes.countProcessed(settled.countIn, settled.at);
  tx.writes.message(state.message);
  if (settled.event) tx.writes.statusEvent(state.message, settled.event, settled.at);
  if (settled.becameFinal) tx.writes.record(state.message, settled.at);
  return settled.changed;
}


/**
 * Ends parts of locked messages with a local final decision (`failPart`: expired, aborted,
 * cancelled, uncertain); then each message settles once, its first ended part as the cause.
 * `ended` holds parts of `states` (the same objects). Returns how many parts it ended.
 */
export function failLoaded(tx: Tx, states: readonly MessageState[], ended: ReadonlySet<PartStatusRow>, reason: string, now: number): number {
  let count = 0;
  for (const state of states) {
    let first: number | null = null;
    for (const p of state.parts) {
      if (!ended.has(p)) continue;
      failPart(p, reason, now);
      releaseClaim(p);
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
