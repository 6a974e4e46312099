/**
 * Batches and schedules, as in the SQLite store: reads, and the state changes of the messaging
 * service's API §3.3 and §3.4 (the rules: `../rules/batches.ts`). Whether a batch's parts may be
 * claimed is written onto the parts (`held`) whenever the batch or its schedule changes state.
 *
 * A change takes the batch's gate (an advisory lock, `locks.ts`) first: changes of one batch, of
 * its schedule, and appends to it run one at a time on every instance. The batch row itself is
 * written last, so the `processed` counter that submit outcomes move waits on it for a moment only.
 */
import type { Batch, BatchState, Schedule } from '../batches.js';
import { BATCH_SELECT, SCHEDULE_SELECT, toBatch, toSchedule, type BatchRow, type ScheduleRow } from '../rows.js';
import { checkBatchTransition, checkScheduleTransition, heldBy } from '../rules/batches.js';
import { REASON_BATCH_ABORTED, REASON_SCHEDULE_CANCELLED } from '../rules/submit.js';
import type { Queryable, Tx } from './db.js';
import { lockBatchGate, type LockSpaces } from './locks.js';
import { failWhere } from './part-status.js';
import { continueSeries } from './recurrence.js';

const BY_ID_SQL = `${BATCH_SELECT} WHERE b.id = $1 AND b.client = $2`;

export async function getBatch(db: Queryable, client: string, batchId: number): Promise<Batch | undefined> {
  const row = await db.row<BatchRow>(BY_ID_SQL, [batchId, client]);
  return row && toBatch(row);
}

/** Newest first. */
export async function listBatches(db: Queryable, client: string): Promise<Batch[]> {
  return (await db.rows<BatchRow>(`${BATCH_SELECT} WHERE b.client = $1 ORDER BY b.id DESC`, [client])).map(toBatch);
}

/** Newest first. */
export async function listSchedules(db: Queryable, client: string): Promise<Schedule[]> {
  return (await db.rows<ScheduleRow>(`${SCHEDULE_SELECT} WHERE client = $1 ORDER BY id DESC`, [client])).map(toSchedule);
}

export async function setBatchState(tx: Tx, spaces: LockSpaces, client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined> {
  // The gate is taken before the batch is known to be this client's: a lock taken in vain costs nothing.
  await lockBatchGate(tx, spaces, batchId);
  const row = await tx.row<BatchRow>(BY_ID_SQL, [batchId, client]);
  if (!row) return undefined;
  checkBatchTransition(batchId, row.state, state);
  await refreshHeld(tx, batchId, heldBy(state, row.schedule_state));
  if (state === 'aborted') await failQueued(tx, batchId, REASON_BATCH_ABORTED, now);
  await tx.run('UPDATE batches SET state = $1, updated_at = $2 WHERE id = $3', [state, now, batchId]);
  tx.flush();
  return getBatch(tx, client, batchId);
}

export async function setScheduleState(
  tx: Tx, spaces: LockSpaces, client: string, scheduleId: number, state: 'released' | 'cancelled', now: number,
): Promise<Schedule | undefined> {
  const found = await tx.row<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = $1 AND client = $2`, [scheduleId, client]);
  if (!found) return undefined;
  await lockBatchGate(tx, spaces, found.batch_id);
  const row = await tx.row<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = $1`, [scheduleId]);
  if (!row) return undefined;
  checkScheduleTransition(scheduleId, row.state, state);
  await changeSchedule(tx, row, state, now);
  const after = await tx.row<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = $1`, [scheduleId]);
  return after && toSchedule(after);
}

/**
 * Schedules whose runAt has come are released. Returns how many this call released (another
 * instance may have released some first). One transaction holds the gates of all of them, taken
 * in batch id order as every taker of several gates does (`locks.ts`), not in the order they came
 * due: which are released does not depend on the order, and a move holding some of the same gates
 * never waits on this call while this call waits on it.
 */
export async function releaseDue(tx: Tx, spaces: LockSpaces, now: number): Promise<number> {
  const due = await tx.rows<ScheduleRow>(`${SCHEDULE_SELECT} WHERE state = 'scheduled' AND run_at <= $1 ORDER BY batch_id`, [now]);
  let released = 0;
  for (const candidate of due) {
    await lockBatchGate(tx, spaces, candidate.batch_id);
    const row = await tx.row<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = $1 AND state = 'scheduled' AND batch_id = $2`, [candidate.id, candidate.batch_id]);
    if (!row) continue;
    await changeSchedule(tx, row, 'released', now);
    released++;
  }
  return released;
}

/** With the batch's gate held. A cancelled schedule aborts its batch: its messages will never go. */
async function changeSchedule(tx: Tx, row: ScheduleRow, state: 'released' | 'cancelled', now: number): Promise<void> {
  await tx.run('UPDATE schedules SET state = $1, updated_at = $2 WHERE id = $3', [state, now, row.id]);
  if (state === 'cancelled') {
    await refreshHeld(tx, row.batch_id, 1);
    await failQueued(tx, row.batch_id, REASON_SCHEDULE_CANCELLED, now);
    await tx.run("UPDATE batches SET state = 'aborted', updated_at = $1 WHERE id = $2 AND state <> 'aborted'", [now, row.batch_id]);
    return;
  }
  const batch = await tx.row<{ state: BatchState }>('SELECT state FROM batches WHERE id = $1', [row.batch_id]);
  await refreshHeld(tx, row.batch_id, heldBy(batch?.state ?? 'active', state));
  await continueSeries(tx, row, now);
}

/**
 * Writes whether the batch's parts wait onto every part of it not yet done; in a spaced batch,
 * those whose turn has not come wait whatever the batch's state (`batch-turns.ts`). The rows are
 * locked in queue order, the order claims lock theirs in, so the two never deadlock.
 */
async function refreshHeld(tx: Tx, batchId: number, held: 0 | 1): Promise<void> {
  await tx.run(
    `WITH target AS (
       SELECT q.message_id, q.part, CASE WHEN $1 = 1 OR (b.spacing_ms IS NOT NULL AND q.message_seq > b.turns_through) THEN 1 ELSE 0 END AS held
       FROM parts q JOIN batches b ON b.id = q.batch_id
       WHERE q.batch_id = $2 AND q.state <> 'done' ORDER BY q.message_seq, q.part FOR UPDATE OF q)
     UPDATE parts p SET held = t.held FROM target t WHERE p.message_id = t.message_id AND p.part = t.part AND p.held <> t.held`,
    [held, batchId],
  );
}

/**
 * Fails the batch's queued parts. First waits for (locks) its inflight parts: a submit outcome
 * that requeues one of them either committed before (its part is queued now, and failed here) or
 * waits for this transaction and then finds the batch ended (`submit.ts`, `requeueParts`).
 */
async function failQueued(tx: Tx, batchId: number, reason: string, now: number): Promise<void> {
  await tx.run("SELECT 1 FROM parts WHERE batch_id = $1 AND state = 'inflight' ORDER BY message_seq, part FOR UPDATE", [batchId]);
  const queued = await tx.rows<{ message_id: string }>(
    "SELECT DISTINCT message_id, message_seq FROM parts WHERE batch_id = $1 AND state = 'queued' ORDER BY message_seq", [batchId]);
  await failWhere(tx, queued.map((q) => q.message_id), (p) => p.state === 'queued' && p.batch_id === batchId, reason, now);
}
