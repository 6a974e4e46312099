/**
 * Submit outcomes, and the sweeps that end parts without one: inflight recovery at start, expiry.
 * What an outcome makes of a part: `../rules/submit.ts`.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { PartResult } from '../claims.js';
import type { MessageState, PartRow, PartStatusRow } from '../rows.js';
import {
  endPart, REASON_EXPIRED, REASON_UNCERTAIN, recoveryPolicy, requeueRefusal, resultPart, submittedMessage, type BatchGate,
} from '../rules/submit.js';
import { failParts, loadMessageState, PART_SELECT, settleLoaded } from './part-status.js';
import { applyParked } from './receipts.js';
import type { Sql } from './sql.js';

/**
 * Records the outcomes of a claimed message's parts. A part already done keeps its first
 * outcome (a repeated result changes nothing); an unknown message or part is a caller's bug.
 */
export function recordSubmit(sql: Sql, messageId: string, results: readonly PartResult[], now: number): void {
  // The message and its parts are read once (or found cached) and kept up to date in memory;
  // looked up again, when another result needs them, after a step that may have replaced them
  // (parked receipts, a requeue).
  let state: MessageState | undefined = submittedMessage(loadMessageState(sql, messageId), messageId);
  for (const result of results) {
    state ??= reload(sql, messageId);
    const part = resultPart(state.parts, messageId, result);
    if (!part) continue;
    if (result.kind === 'requeue') {
      requeuePart(sql, part, result.notBefore, now, result.attempts);
      state = undefined;
      continue;
    }
    endPart(part, result, now);
    if (result.kind === 'accepted') {
      sql.run(ACCEPTED_SQL, part.status, part.reason, part.smsc_id, part.match_key, part.bind, part.attempts, part.updated_at, now, messageId, part.part);
    } else {
      sql.run(FINAL_SQL, part.status, part.reason, part.attempts, part.updated_at, messageId, part.part);
    }
    settleLoaded(sql, state, { part: part.part, receipt: null }, now);
    if (result.kind === 'accepted' && applyParked(sql, state.message.upstream, result.matchKey, messageId, part.part, now) > 0) {
      state = undefined;
    }
  }
}

const ACCEPTED_SQL = `UPDATE parts SET state = 'done', status = ?, reason = ?, smsc_id = ?, match_key = ?, bind = ?, attempts = ?, updated_at = ?,
  sent_at = ? WHERE message_id = ? AND part = ?`;
const FINAL_SQL = "UPDATE parts SET state = 'done', status = ?, reason = ?, attempts = ?, updated_at = ? WHERE message_id = ? AND part = ?";

function reload(sql: Sql, messageId: string): MessageState {
  const state = loadMessageState(sql, messageId);
  if (!state) throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: message ${messageId} vanished`, { messageId });
  return state;
}

const GATE_SQL = 'SELECT b.state, s.state AS schedule_state FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = ?';

/**
 * Puts a part back in the queue, eligible at `notBefore` (null: keep its own), with `attempts`
 * (absent: keep its own), unless its batch or schedule has ended meanwhile (`requeueRefusal`).
 */
function requeuePart(sql: Sql, part: PartStatusRow, notBefore: number | null, now: number, attempts?: number): void {
  sql.statuses.forget(part.message_id);
  const gate = part.batch_id === null ? undefined : sql.get<BatchGate>(GATE_SQL, part.batch_id);
  const refused = requeueRefusal(gate);
  if (refused !== null) {
    failParts(sql, [part], refused, now);
  } else {
    sql.run(
      "UPDATE parts SET state = 'queued', not_before = COALESCE(?, not_before), attempts = COALESCE(?, attempts), updated_at = ? WHERE message_id = ? AND part = ?",
      notBefore, attempts ?? null, now, part.message_id, part.part,
    );
  }
}

/** Parts left inflight by a stop: back to the queue, or FAILED as uncertain, by their upstream's policy. */
export function recoverInflight(sql: Sql, policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): number {
  const parts = sql.all<PartRow>(`${PART_SELECT} WHERE state = 'inflight' ORDER BY message_seq, part`);
  for (const part of parts) {
    if (recoveryPolicy(policies, part.upstream) === 'resend') requeuePart(sql, part, null, now);
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
