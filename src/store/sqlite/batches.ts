/**
 * Batches and schedules: reads, and the state changes of the messaging service's API §3.3 and
 * §3.4 (the rules: `../rules/batches.ts`). Whether a batch's parts may be claimed is written onto
 * the parts (`held`) whenever the batch or its schedule changes state, so claim reads one index.
 */
import type { Batch, BatchState, Schedule } from '../batches.js';
import { BATCH_SELECT, SCHEDULE_SELECT, toBatch, toSchedule, type BatchRow, type PartRow, type ScheduleRow } from '../rows.js';
import { checkBatchTransition, checkScheduleTransition, heldBy } from '../rules/batches.js';
import { REASON_BATCH_ABORTED, REASON_SCHEDULE_CANCELLED } from '../rules/submit.js';
import { failParts, PART_SELECT } from './part-status.js';
import { continueSeries } from './recurrence.js';
import type { Sql } from './sql.js';

export function getBatch(sql: Sql, client: string, batchId: number): Batch | undefined {
  const row = sql.get<BatchRow>(`${BATCH_SELECT} WHERE b.id = ? AND b.client = ?`, batchId, client);
  return row && toBatch(row);
}

/** Newest first. */
export function listBatches(sql: Sql, client: string): Batch[] {
  return sql.all<BatchRow>(`${BATCH_SELECT} WHERE b.client = ? ORDER BY b.id DESC`, client).map(toBatch);
}

/** Newest first. */
export function listSchedules(sql: Sql, client: string): Schedule[] {
  return sql.all<ScheduleRow>(`${SCHEDULE_SELECT} WHERE client = ? ORDER BY id DESC`, client).map(toSchedule);
}

export function setBatchState(sql: Sql, client: string, batchId: number, state: BatchState, now: number): Batch | undefined {
  const row = sql.get<BatchRow>(`${BATCH_SELECT} WHERE b.id = ? AND b.client = ?`, batchId, client);
  if (!row) return undefined;
  checkBatchTransition(batchId, row.state, state);
  sql.run('UPDATE batches SET state = ?, updated_at = ? WHERE id = ?', state, now, batchId);
  refreshHeld(sql, batchId, heldBy(state, row.schedule_state));
  if (state === 'aborted') failQueued(sql, batchId, REASON_BATCH_ABORTED, now);
  return getBatch(sql, client, batchId);
}

export function setScheduleState(
  sql: Sql,
  client: string,
  scheduleId: number,
  state: 'released' | 'cancelled',
  now: number,
): Schedule | undefined {
  const row = sql.get<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = ? AND client = ?`, scheduleId, client);
  if (!row) return undefined;
  checkScheduleTransition(scheduleId, row.state, state);
  changeSchedule(sql, row, state, now);
  const after = sql.get<ScheduleRow>(`${SCHEDULE_SELECT} WHERE id = ?`, scheduleId);
  return after && toSchedule(after);
}

/** Schedules whose runAt has come are released. Returns how many. */
export function releaseDue(sql: Sql, now: number): number {
  const due = sql.all<ScheduleRow>(`${SCHEDULE_SELECT} WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at, id`, now);
  for (const row of due) changeSchedule(sql, row, 'released', now);
  return due.length;
}

/** A cancelled schedule aborts its batch: its messages will never go, and the list says so. */
function changeSchedule(sql: Sql, row: ScheduleRow, state: 'released' | 'cancelled', now: number): void {
  sql.run('UPDATE schedules SET state = ?, updated_at = ? WHERE id = ?', state, now, row.id);
  if (state === 'cancelled') {
    sql.run("UPDATE batches SET state = 'aborted', updated_at = ? WHERE id = ? AND state <> 'aborted'", now, row.batch_id);
    refreshHeld(sql, row.batch_id, 1);
    failQueued(sql, row.batch_id, REASON_SCHEDULE_CANCELLED, now);
    return;
  }
  const batch = sql.get<{ state: BatchState }>('SELECT state FROM batches WHERE id = ?', row.batch_id);
  refreshHeld(sql, row.batch_id, heldBy(batch?.state ?? 'active', state));
  continueSeries(sql, row, now);
}

/**
 * Writes whether the batch's parts wait onto every part of it not yet done. In a spaced batch,
 * the messages whose turn has not come wait whatever the batch's state (`batch-turns.ts`).
 */
function refreshHeld(sql: Sql, batchId: number, held: 0 | 1): void {
  const turns = sql.get<{ spacing_ms: number | null; turns_through: number }>('SELECT spacing_ms, turns_through FROM batches WHERE id = ?', batchId);
  if (held === 0 && turns && turns.spacing_ms !== null) {
    sql.run("UPDATE parts SET held = (message_seq > ?) WHERE batch_id = ? AND state != 'done' AND held != (message_seq > ?)",
      turns.turns_through, batchId, turns.turns_through);
    return;
  }
  sql.run("UPDATE parts SET held = ? WHERE batch_id = ? AND state != 'done' AND held != ?", held, batchId, held);
}

function failQueued(sql: Sql, batchId: number, reason: string, now: number): void {
  const parts = sql.all<PartRow>(`${PART_SELECT} WHERE batch_id = ? AND state = 'queued' ORDER BY message_seq, part`, batchId);
  failParts(sql, parts, reason, now);
}
