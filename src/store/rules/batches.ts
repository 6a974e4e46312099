/**
 * The rules of batches and schedules (the messaging service's API §3.3 and §3.4), decided once
 * for both stores: whether a batch's parts wait, which state changes are allowed, and which batch
 * and schedule an accept's messages join.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { BatchState, ScheduleState } from '../batches.js';
import type { AcceptRequest, NewMessage } from '../intake.js';

/**
 * Whether parts of a batch wait: 1 unless the batch is active and its schedule (if any) is
 * released. Parts without a batch never wait on one.
 */
export function heldBy(batchState: BatchState | null, scheduleState: ScheduleState | null): 0 | 1 {
  if (batchState === null) return 0;
  return batchState === 'active' && (scheduleState === null || scheduleState === 'released') ? 0 : 1;
}

/** API §3.3: which state may follow which, and what a refused change says. */
function batchTransitionError(from: BatchState, to: BatchState): string | null {
  switch (to) {
    case 'paused':
      return from === 'active' ? null : 'only active batches can be paused';
    case 'active':
      return from === 'paused' ? null : 'only paused batches can be resumed';
    case 'aborted':
      return from === 'active' || from === 'paused' ? null : 'only active or paused batches can be aborted';
  }
}

/** Throws INVALID_STATE_TRANSITION when the batch may not go from `from` to `to`. */
export function checkBatchTransition(batchId: number, from: BatchState, to: BatchState): void {
  const refused = batchTransitionError(from, to);
  if (refused !== null) throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, refused, { batchId, from, to });
}

/** API §3.4: only a scheduled campaign can be sent now or cancelled; throws INVALID_STATE_TRANSITION otherwise. */
export function checkScheduleTransition(scheduleId: number, from: ScheduleState, to: 'released' | 'cancelled'): void {
  if (from === 'scheduled') return;
  const verb = to === 'released' ? 'sent now' : 'cancelled';
  throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, `only scheduled campaigns can be ${verb}`, { scheduleId, from, to });
}

/** The batch and schedule an accept's messages join, and whether their parts wait (`heldBy`). */
export interface AcceptTarget {
  batchId: number | null;
  scheduleId: number | null;
  held: 0 | 1;
}

/** Messages in no batch: they never wait on one. */
export const NO_BATCH: Readonly<AcceptTarget> = { batchId: null, scheduleId: null, held: 0 };

/** A request names a new batch or an existing one, not both; a schedule comes with a new batch. */
export function checkAcceptTarget(request: Pick<AcceptRequest, 'batch' | 'batchId' | 'schedule'>): void {
  if (request.batch !== undefined && request.batchId !== undefined) {
    throw new SmppdError(ErrorCode.INTERNAL, 'accept takes a new batch or an existing batchId, not both');
  }
  if (request.schedule !== undefined && request.batch === undefined) {
    throw new SmppdError(ErrorCode.INTERNAL, 'a schedule is created with a new batch');
  }
}

/** A message is stored with at least one part. */
export function checkHasParts(m: NewMessage): void {
  if (m.parts.length === 0) throw new SmppdError(ErrorCode.INTERNAL, `message ${m.id} has no parts`, { messageId: m.id });
}

/**
 * A batch just created, with its schedule when one was created too (its parts wait for it). The
 * messages of a spaced batch (`NewBatch.spacingMs`) wait for their turn (`batch-turns.ts`).
 */
export function newBatchTarget(batchId: number, scheduleId: number | null, spaced = false): AcceptTarget {
  return { batchId, scheduleId, held: scheduleId === null && !spaced ? 0 : 1 };
}

/** An existing batch as an append reads it, with its schedule. */
export interface AppendedBatchRow {
  client: string;
  state: BatchState;
  schedule_id: number | null;
  schedule_state: ScheduleState | null;
  spacing_ms: number | null;
}

/**
 * Appending to a batch: it must exist for the messages' client (`client` undefined: no message
 * to tell) and still take messages.
 */
export function appendTarget(batchId: number, client: string | undefined, row: AppendedBatchRow | undefined): AcceptTarget {
  if (!row || (client !== undefined && row.client !== client)) {
    throw new SmppdError(ErrorCode.BATCH_NOT_FOUND, `batch ${batchId} does not exist`, { batchId });
  }
  if (row.state === 'aborted') {
    throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, 'an aborted batch takes no more messages', { batchId });
  }
  if (row.schedule_state === 'cancelled') {
    throw new SmppdError(ErrorCode.INVALID_STATE_TRANSITION, 'the schedule of this batch is cancelled', { batchId });
  }
  // Appended messages of a spaced batch have not had their turn yet.
  return { batchId, scheduleId: row.schedule_id, held: row.spacing_ms !== null ? 1 : heldBy(row.state, row.schedule_state) };
}
