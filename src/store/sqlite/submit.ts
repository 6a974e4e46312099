/** Submit outcomes, and the sweeps that end parts without one: inflight recovery at start, expiry. */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { BatchState, PartResult, ScheduleState } from '../store.js';
import { mergeStatus } from '../../sms/status.js';
import {
  failParts, loadMessageState, PART_SELECT, settleLoaded, type MessageState, type PartStatusRow,
} from './part-status.js';
import { applyParked } from './receipts.js';
import type { PartRow } from './rows.js';
import type { Sql } from './sql.js';

export const REASON_UNCERTAIN = 'uncertain: daemon stopped while the submit_sm was outstanding';
export const REASON_EXPIRED = 'validity expired before submission';
export const REASON_BATCH_ABORTED = 'batch aborted';
export const REASON_SCHEDULE_CANCELLED = 'schedule cancelled';

/**
 * Records the outcomes of a claimed message's parts. A part already done keeps its first
 * outcome (a repeated result changes nothing); an unknown message or part is a caller's bug.
 */
export function recordSubmit(sql: Sql, messageId: string, results: readonly PartResult[], now: number): void {
  // The message and its parts are read once and kept up to date in memory; read again only
  // after a step that changed them behind this function's back (parked receipts, a requeue).
  let state = loadMessageState(sql, messageId);
  if (!state) throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: no message ${messageId}`, { messageId });
  for (const result of results) {
    const part = state.parts.find((p) => p.part === result.part);
    if (!part) {
      throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: message ${messageId} has no part ${result.part}`, { messageId, part: result.part });
    }
    if (part.state === 'done') continue;
    switch (result.kind) {
      case 'accepted': {
        const merged = mergeStatus(part.status, 'SENT');
        if (merged.changed) {
          part.status = merged.status;
          part.reason = null;
        }
        part.state = 'done';
        part.smsc_id = result.smscId;
        sql.run(ACCEPTED_SQL, part.status, part.reason, result.smscId, result.matchKey, result.bind, result.attempts, now, messageId, result.part);
        settleLoaded(sql, state, { part: result.part, receipt: null }, now);
        if (applyParked(sql, state.message.upstream, result.matchKey, messageId, result.part, now) > 0) state = reload(sql, messageId);
        break;
      }
      case 'final': {
        const merged = mergeStatus(part.status, result.status);
        if (merged.changed) {
          part.status = merged.status;
          part.reason = result.reason;
        }
        part.state = 'done';
        sql.run(FINAL_SQL, part.status, part.reason, result.attempts, now, messageId, result.part);
        settleLoaded(sql, state, { part: result.part, receipt: null }, now);
        break;
      }
      case 'requeue':
        requeuePart(sql, part, result.notBefore, now);
        state = reload(sql, messageId);
        break;
    }
  }
}

const ACCEPTED_SQL = `UPDATE parts SET state = 'done', status = ?, reason = ?, smsc_id = ?, match_key = ?, bind = ?, attempts = ?, updated_at = ?
  WHERE message_id = ? AND part = ?`;
const FINAL_SQL = "UPDATE parts SET state = 'done', status = ?, reason = ?, attempts = ?, updated_at = ? WHERE message_id = ? AND part = ?";

function reload(sql: Sql, messageId: string): MessageState {
  const state = loadMessageState(sql, messageId);
  if (!state) throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: message ${messageId} vanished`, { messageId });
  return state;
}

/**
 * Puts a part back in the queue, eligible at `notBefore` (null: keep its own). A part whose batch
 * was aborted, or whose schedule was cancelled, meanwhile ends as its queued siblings did.
 */
function requeuePart(sql: Sql, part: PartStatusRow, notBefore: number | null, now: number): void {
  const gate = part.batch_id === null
    ? undefined
    : sql.get<{ state: BatchState; schedule_state: ScheduleState | null }>(
      'SELECT b.state, s.state AS schedule_state FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = ?',
      part.batch_id,
    );
  if (gate?.state === 'aborted') {
    failParts(sql, [part], REASON_BATCH_ABORTED, now);
  } else if (gate?.schedule_state === 'cancelled') {
    failParts(sql, [part], REASON_SCHEDULE_CANCELLED, now);
  } else {
    sql.run("UPDATE parts SET state = 'queued', not_before = COALESCE(?, not_before), updated_at = ? WHERE message_id = ? AND part = ?",
      notBefore, now, part.message_id, part.part);
  }
}

/** Parts left inflight by a stop: back to the queue, or FAILED as uncertain, by their upstream's policy. */
export function recoverInflight(sql: Sql, policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): number {
  const parts = sql.all<PartRow>(`${PART_SELECT} WHERE state = 'inflight' ORDER BY message_seq, part`);
  for (const part of parts) {
    const policy = Object.hasOwn(policies, part.upstream) ? policies[part.upstream] : 'resend';
    if (policy === 'resend') requeuePart(sql, part, null, now);
    else failParts(sql, [part], REASON_UNCERTAIN, now);
  }
  return parts.length;
}

/** Queued parts of messages past their expiresAt become FAILED. Returns how many messages. */
export function expire(sql: Sql, now: number): number {
  const parts = sql.all<PartRow>(
    `SELECT * FROM parts INDEXED BY parts_expiry
     WHERE state = 'queued' AND expires_at IS NOT NULL AND expires_at < ? ORDER BY message_seq, part`,
    now,
  );
  failParts(sql, parts, REASON_EXPIRED, now);
  return new Set(parts.map((p) => p.message_id)).size;
}
