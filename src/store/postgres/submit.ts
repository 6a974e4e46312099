/**
 * Submit outcomes, and the sweeps that end parts without one: recovery of inflight parts and
 * expiry. The rules are those of the SQLite store (`../rules/submit.ts`), with what several
 * instances add: an inflight part belongs to the instance that claimed it, and another
 * takes it over only when that instance is gone (lease ended, instance lock free).
 */
import type { PartResult } from '../claims.js';
import {
  endPart, REASON_EXPIRED, REASON_UNCERTAIN, recoveryPolicy, requeueRefusal, resultPart, submittedMessage, type BatchGate,
} from '../rules/submit.js';
import type { Queryable, Tx } from './db.js';
import { liveInstancesSql, type LockSpaces } from './locks.js';
import { failLoaded, failWhere, lockMessages, settleLoaded, type MessageState, type PartStatusRow } from './part-status.js';
import { releaseClaim } from './rows.js';

export interface InstanceContext {
  instanceId: string;
  spaces: LockSpaces;
}

/** One message's submit outcomes, as `SubmitClaims.recordSubmit` takes them. */
export interface SubmitOutcome {
  messageId: string;
  results: readonly PartResult[];
  now: number;
}

/**
 * The match keys of the accepted results that will be recorded (their part not done before
 * them), as `recordOne` will see them in the order given: the parked receipts to take for them.
 */
export function keysToMatch(states: ReadonlyMap<string, MessageState>, outcomes: readonly SubmitOutcome[]): Array<{ upstream: string; key: string }> {
  const wanted: Array<{ upstream: string; key: string }> = [];
  const doneParts = new Map<string, Set<number>>();
  for (const o of outcomes) {
    const state = submittedMessage(states.get(o.messageId), o.messageId);
    let done = doneParts.get(o.messageId);
    if (done === undefined) doneParts.set(o.messageId, done = new Set(state.parts.filter((p) => p.state === 'done').map((p) => p.part)));
    for (const r of o.results) {
      if (done.has(r.part) || !state.parts.some((p) => p.part === r.part)) continue;
      if (r.kind === 'accepted') wanted.push({ upstream: state.message.upstream, key: r.matchKey });
      if (r.kind !== 'requeue') done.add(r.part);
    }
  }
  return wanted;
}

/** Called when an accepted result has given a part of a locked message its match key (at `now`). */
export type OnKeyed = (state: MessageState, part: PartStatusRow, matchKey: string, now: number) => void;

/**
 * Records one message's outcomes on its locked state, in order. A part already done keeps its
 * first outcome; an unknown part is a caller's bug. A requeue of a part that another instance
 * has claimed since (this one's claim was taken over) changes nothing: the part is that one's now.
 */
export async function recordOne(tx: Tx, ctx: InstanceContext, state: MessageState, o: SubmitOutcome, onKeyed: OnKeyed): Promise<void> {
  const { messageId, results, now } = o;
  for (const result of results) {
    const part = resultPart(state.parts, messageId, result);
    if (!part) continue;
    if (result.kind === 'requeue') {
      if (part.state === 'inflight' && part.claimed_by !== null && part.claimed_by !== ctx.instanceId) continue;
      await requeueParts(tx, state, new Set([part]), result.notBefore, now, result.attempts);
      continue;
    }
    endPart(part, result, now);
    releaseClaim(part);
    tx.writes.part(part);
    settleLoaded(tx, state, { part: part.part, receipt: null }, now);
    if (result.kind === 'accepted') onKeyed(state, part, result.matchKey, now);
  }
}

const GATE_SQL = 'SELECT b.state, s.state AS schedule_state FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id WHERE b.id = $1';

/**
 * Puts parts of a locked message back in the queue, eligible at `notBefore` (null: keep their
 * own), with `attempts` (absent: keep their own), unless their batch or schedule has ended
 * meanwhile (`requeueRefusal`). The batch is read after the parts were locked: an abort that has failed
 * the batch's queued parts also holds its inflight parts until it commits (`batches.ts`), so
 * this either waited for it and reads 'aborted', or comes first and is failed by it.
 */
async function requeueParts(
  tx: Tx, state: MessageState, parts: ReadonlySet<PartStatusRow>, notBefore: number | null, now: number, attempts?: number,
): Promise<void> {
  if (parts.size === 0) return;
  const batchId = state.message.batch_id;
  const gate = batchId === null ? undefined : await tx.row<BatchGate>(GATE_SQL, [batchId]);
  const refused = requeueRefusal(gate);
  if (refused !== null) {
    failLoaded(tx, [state], parts, refused, now);
  } else {
    for (const p of parts) {
      p.state = 'queued';
      p.not_before = notBefore ?? p.not_before;
      p.attempts = attempts ?? p.attempts;
      p.updated_at = now;
      releaseClaim(p);
      tx.writes.part(p);
    }
  }
}

export type Policies = Readonly<Record<string, 'resend' | 'fail'>>;

interface InflightRow {
  message_id: string;
  part: number;
  claimed_by: string | null;
  lease_until: number | null;
}

/** Inflight parts of this instance (`$1`) or of an instance that is gone (`$2` now, `$3` its lock space). */
const MINE_OR_ABANDONED_SQL = `SELECT message_id, part, claimed_by, lease_until FROM parts
  WHERE state = 'inflight' AND (claimed_by = $1 OR claimed_by IS NULL
    OR (lease_until < $2 AND hashtext(claimed_by)::oid NOT IN (${liveInstancesSql(3)})))
  ORDER BY message_seq, part`;

/**
 * Inflight parts of instances that are gone, never this one's (`$1`): run every few seconds by
 * every instance, so it costs a probe of parts_inflight per instance that holds parts (a loose
 * index scan over its leading column) and reads the parts of gone instances only. Each
 * instance's own leases are renewed ahead of their end, so a live one's parts fail
 * `lease_until < $2` inside the index.
 */
export const ABANDONED_SQL = `WITH RECURSIVE holders AS (
    (SELECT p.claimed_by FROM parts p WHERE p.state = 'inflight' AND p.claimed_by IS NOT NULL ORDER BY p.claimed_by LIMIT 1)
    UNION ALL
    SELECT (SELECT p.claimed_by FROM parts p WHERE p.state = 'inflight' AND p.claimed_by > h.claimed_by ORDER BY p.claimed_by LIMIT 1)
    FROM holders h WHERE h.claimed_by IS NOT NULL
  )
  SELECT p.message_id, p.part, p.claimed_by, p.lease_until, p.message_seq FROM holders h CROSS JOIN LATERAL (
      SELECT q.message_id, q.part, q.claimed_by, q.lease_until, q.message_seq FROM parts q
      WHERE q.state = 'inflight' AND q.claimed_by = h.claimed_by AND q.lease_until < $2
    ) p
    WHERE h.claimed_by <> $1 AND hashtext(h.claimed_by)::oid NOT IN (${liveInstancesSql(3)})
  UNION ALL
  SELECT p.message_id, p.part, p.claimed_by, p.lease_until, p.message_seq FROM parts p WHERE p.state = 'inflight' AND p.claimed_by IS NULL
  ORDER BY message_seq, part`;

/**
 * Parts left inflight by a stop: this instance's (a restart: nothing of this process holds them)
 * and, with `othersOnly` or not, those of instances that are gone: their lease has ended and
 * their instance lock is free. Back to the queue, or FAILED as uncertain, by their upstream's
 * policy. A part claimed again since it was selected is left alone. Returns how many parts it touched.
 */
export async function recoverInflight(tx: Tx, ctx: InstanceContext, policies: Policies, now: number, othersOnly = false): Promise<number> {
  const candidates = await tx.rows<InflightRow>(othersOnly ? ABANDONED_SQL : MINE_OR_ABANDONED_SQL, [ctx.instanceId, now, ctx.spaces.instance]);
  if (candidates.length === 0) return 0;
  const wanted = new Map(candidates.map((c) => [`${c.message_id}\u0000${c.part}`, c]));
  const states = await lockMessages(tx, candidates.map((c) => c.message_id));
  let touched = 0;
  for (const state of states) {
    // Still as selected: inflight under the same claim.
    const parts = state.parts.filter((p) => {
      const c = wanted.get(`${p.message_id}\u0000${p.part}`);
      return c !== undefined && p.state === 'inflight' && p.claimed_by === c.claimed_by && p.lease_until === c.lease_until;
    });
    if (parts.length === 0) continue;
    touched += parts.length;
    if (recoveryPolicy(policies, state.message.upstream) === 'resend') await requeueParts(tx, state, new Set(parts), null, now);
    else failLoaded(tx, [state], new Set(parts), REASON_UNCERTAIN, now);
  }
  return touched;
}

/**
 * Queued parts of messages past their expiresAt become FAILED. Returns how many messages. Every
 * instance runs it: the second to come finds the parts done and changes nothing.
 */
export async function expire(tx: Tx, now: number): Promise<number> {
  const due = await tx.rows<{ message_id: string }>(
    `SELECT DISTINCT message_id, message_seq FROM parts
     WHERE state = 'queued' AND expires_at IS NOT NULL AND expires_at < $1 ORDER BY message_seq`,
    [now],
  );
  if (due.length === 0) return 0;
  const pick = (p: PartStatusRow) => p.state === 'queued' && p.expires_at !== null && p.expires_at < now;
  return (await failWhere(tx, due.map((d) => d.message_id), pick, REASON_EXPIRED, now)).messages;
}

/**
 * Extends this instance's (`$1`) inflight leases that end before `$2` to `$3`. A part another
 * transaction holds (its outcome being written) is skipped, not waited for: its lease is
 * renewed next time if it is still inflight, and a wait could deadlock with a status write
 * that locks parts in another order.
 */
export const RENEW_LEASES_SQL = `UPDATE parts p SET lease_until = $3 FROM (
    SELECT message_id, part FROM parts WHERE state = 'inflight' AND claimed_by = $1 AND lease_until < $2 FOR UPDATE SKIP LOCKED
  ) AS due WHERE p.message_id = due.message_id AND p.part = due.part`;

/** Extends this instance's inflight leases that end before `renewBefore` to `leaseUntil`. Returns how many. */
export async function renewLeases(db: Queryable, ctx: InstanceContext, renewBefore: number, leaseUntil: number): Promise<number> {
  return db.run(RENEW_LEASES_SQL, [ctx.instanceId, renewBefore, leaseUntil]);
}
