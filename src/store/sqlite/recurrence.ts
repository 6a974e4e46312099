/**
 * Recurring schedules in the SQLite store (the rules: `../rules/recurrence.ts`): a schedule's
 * series written at its accept, and the batch of the next run made when a run is released, in
 * the transaction of the release.
 */
import { uuidV7 } from '../../core/ids.js';
import type { NewSchedule } from '../intake.js';
import {
  columnList, COPIED_BATCH_COLUMNS, COPIED_MESSAGE_COLUMNS, COPIED_PART_COLUMNS, nextRunOf, recurrenceMigration, SERIES_COLUMNS, seriesValues,
} from '../rules/recurrence.js';
import type { Migration } from '../rules/migrations.js';
import type { ScheduleRow } from '../rows.js';
import { submittedEvent } from '../status-events.js';
import { writeStatusEvent } from './outbox.js';
import type { Sql } from './sql.js';

/** Migration 16 (listed in `migrations.ts`; never edited once released). */
export const RECURRENCE_MIGRATION: Migration = recurrenceMigration('INTEGER');

/** Writes the series of a schedule just inserted, when it has one. */
export function startSeries(sql: Sql, scheduleId: number | bigint, schedule: NewSchedule): void {
  const values = seriesValues(schedule);
  if (values === undefined) return;
  sql.run(`UPDATE schedules SET ${SERIES_COLUMNS.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, ...values, scheduleId);
}

/**
 * After the schedule's run was released (state and parts already written): counts the run, and
 * when the series goes on, makes the next run's batch and points the schedule at it, scheduled.
 */
export function continueSeries(sql: Sql, row: ScheduleRow, now: number): void {
  const next = nextRunOf(row, now);
  if (next === null) {
    sql.run('UPDATE schedules SET runs = runs + 1, last_run_at = ? WHERE id = ?', now, row.id);
    return;
  }
  const batchId = copyRun(sql, row, next - row.run_at, now);
  sql.run(`UPDATE schedules SET batch_id = ?, run_at = ?, state = 'scheduled', runs = runs + 1, last_run_at = ?, updated_at = ? WHERE id = ?`,
    batchId, next, now, now, row.id);
}

// Pairs of [released id, new id] in message order, as a JSON array: one statement copies them all.
const COPY_MESSAGES_SQL = `INSERT INTO messages (id, batch_id, expires_at, not_before, status, created_at, updated_at, ${columnList(COPIED_MESSAGE_COLUMNS)})
  SELECT json_extract(j.value, '$[1]'), ?, m.expires_at + ?, m.not_before + ?, 'SUBMITTED', ?, ?, ${columnList(COPIED_MESSAGE_COLUMNS, 'm')}
  FROM json_each(?) j JOIN messages m ON m.id = json_extract(j.value, '$[0]') ORDER BY j.key`;

// Held: the new batch waits for its schedule (rules/batches.ts, heldBy('active', 'scheduled')).
const COPY_PARTS_SQL = `INSERT INTO parts (message_id, message_seq, upstream, client, batch_id, expires_at, not_before, held, state, status, updated_at,
    ${columnList(COPIED_PART_COLUMNS)})
  SELECT n.id, n.seq, n.upstream, n.client, n.batch_id, n.expires_at, n.not_before, 1, 'queued', 'SUBMITTED', ?, ${columnList(COPIED_PART_COLUMNS, 'p')}
  FROM json_each(?) j JOIN messages n ON n.id = json_extract(j.value, '$[1]') JOIN parts p ON p.message_id = json_extract(j.value, '$[0]')
  ORDER BY j.key, p.part`;

/** A new batch for the next run, `shift` ms after the released one; returns its id. */
function copyRun(sql: Sql, row: ScheduleRow, shift: number, now: number): number {
  const released = row.batch_id;
  sql.run('UPDATE batches SET schedule_id = ? WHERE id = ?', row.id, released);
  const ids = sql.all<{ id: string }>('SELECT id FROM messages WHERE batch_id = ? ORDER BY seq', released).map((m) => [m.id, uuidV7(now)]);
  const created = sql.run(
    `INSERT INTO batches (${columnList(COPIED_BATCH_COLUMNS)}, state, total, created_at, updated_at, schedule_id, next_turn_at)
     SELECT ${columnList(COPIED_BATCH_COLUMNS)}, 'active', ?, ?, ?, ?, CASE WHEN spacing_ms IS NULL THEN NULL ELSE ? END FROM batches WHERE id = ?`,
    ids.length, now, now, row.id, now, released,
  );
  const batchId = Number(created.lastInsertRowid);
  const pairs = JSON.stringify(ids);
  sql.run(COPY_MESSAGES_SQL, batchId, shift, shift, now, now, pairs);
  sql.run(COPY_PARTS_SQL, now, pairs);
  const withEvents = sql.all<{ id: string; client: string; upstream: string; destination: string; parts: number }>(
    `SELECT m.id, m.client, m.upstream, m.destination, (SELECT COUNT(*) FROM parts p WHERE p.message_id = m.id) AS parts
     FROM messages m WHERE m.batch_id = ? AND m.events = 1 ORDER BY m.seq`, batchId);
  for (const m of withEvents) writeStatusEvent(sql, m, submittedEvent({ id: m.id, destination: m.destination, parts: { length: m.parts } }, batchId, now), now);
  return batchId;
}
