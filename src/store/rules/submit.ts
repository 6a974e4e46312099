/**
 * Submit outcomes and the local decisions that end parts without one, decided once for both
 * stores over the rows in memory: which part a result is for, what an outcome makes of the part,
 * whether a part may go back to the queue, and which recovery policy an upstream follows.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { PartStatusRow } from '../rows.js';
import { mergePartStatus } from './part-status.js';
import type { BatchState, ScheduleState } from '../batches.js';
import type { PartResult, PartState } from '../claims.js';

export const REASON_UNCERTAIN = 'uncertain: daemon stopped while the submit_sm was outstanding';
export const REASON_EXPIRED = 'validity expired before submission';
export const REASON_BATCH_ABORTED = 'batch aborted';
export const REASON_SCHEDULE_CANCELLED = 'schedule cancelled';

/** The message of a recordSubmit; an unknown one is a caller's bug. */
export function submittedMessage<S>(state: S | undefined, messageId: string): S {
  if (state === undefined) throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: no message ${messageId}`, { messageId });
  return state;
}

/**
 * The part a submit result is for, or undefined when that part is done already: it keeps its
 * first outcome (a repeated result changes nothing). An unknown part is a caller's bug.
 */
export function resultPart<P extends { part: number; state: PartState }>(parts: readonly P[], messageId: string, result: PartResult): P | undefined {
  const part = parts.find((p) => p.part === result.part);
  if (!part) {
    throw new SmppdError(ErrorCode.INTERNAL, `recordSubmit: message ${messageId} has no part ${result.part}`, { messageId, part: result.part });
  }
  return part.state === 'done' ? undefined : part;
}

type Ending = Extract<PartResult, { kind: 'accepted' | 'final' }>;

/**
 * An outcome that ends the part: accepted moves it to SENT (no reason) and records its SMSC id,
 * match key and bind; final moves it to REJECTED or FAILED with its reason; each where the merge
 * allows. Either way the part is done, with the outcome's attempts.
 */
export function endPart(part: PartStatusRow, result: Ending, now: number): void {
  if (result.kind === 'accepted') {
    mergePartStatus(part, 'SENT', null);
    part.smsc_id = result.smscId;
    part.match_key = result.matchKey;
    part.bind = result.bind;
  } else {
    mergePartStatus(part, result.status, result.reason);
  }
  part.state = 'done';
  part.attempts = result.attempts;
  part.updated_at = now;
}

/** The state of a part's batch and its schedule, when the part has a batch. */
export interface BatchGate {
  state: BatchState;
  schedule_state: ScheduleState | null;
}

/**
 * Whether a part may go back to the queue: null when it may, else the reason it ends with
 * instead, as its queued siblings did (its batch aborted, or its schedule cancelled, meanwhile).
 */
export function requeueRefusal(gate: BatchGate | undefined): string | null {
  if (gate?.state === 'aborted') return REASON_BATCH_ABORTED;
  if (gate?.schedule_state === 'cancelled') return REASON_SCHEDULE_CANCELLED;
  return null;
}

/** What becomes of an upstream's parts left inflight by a stop; an upstream the policies do not name resends. */
export function recoveryPolicy(policies: Readonly<Record<string, 'resend' | 'fail'>>, upstream: string): 'resend' | 'fail' {
  return Object.hasOwn(policies, upstream) ? policies[upstream]! : 'resend';
}
