/**
 * Recurring schedules in the PostgreSQL store, as in the SQLite store (the rules:
 * `../rules/recurrence.ts`). A run is released under its batch's gate, and `releaseDue` finds the
 * schedule again under it still holding that batch: of instances that release the same run at
 * once, the first makes the next run's batch and moves the schedule on; the others find it moved
 * and release nothing.
 */
import { uuidV7 } from '../../core/ids.js';
import type { NewSchedule } from '../intake.js';
import type { Migration } from '../rules/migrations.js';
import {
  columnList, COPIED_BATCH_COLUMNS, COPIED_MESSAGE_COLUMNS, COPIED_PART_COLUMNS, nextRunOf, recurrenceMigration, SERIES_COLUMNS, seriesValues,
} from '../rules/recurrence.js';
import type { ScheduleRow } from '../rows.js';
import { submittedEvent } from '../status-events.js';
import type { Tx } from './db.js';
import { writeNewMessageEvents } from './outbox.js';

/**
 * Migration 16 (listed in `migrations.ts`; never edited once released). Columns added without a
 * default, or with a constant one: no table is rewritten.
 */
export const PG_RECURRENCE_MIGRATION: Migration = recurrenceMigration('BIGINT');

/** Writes the series of a schedule just inserted, when it has one. */
export async function startSeries(tx: Tx, scheduleId: number, schedule: NewSchedule): Promise<void> {
  const values = seriesValues(schedule);
  if (values === undefined) return;
  await tx.run(`UPDATE schedules SET ${SERIES_COLUMNS.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE id = $${SERIES_COLUMNS.length + 1}`,
    [...values, scheduleId]);
}

/**
 * After the schedule's run was released (state and parts already written, its batch's gate
 * held): counts the run, and when the series goes on, makes the next run's batch and points the
 * schedule at it, scheduled.
 */
export async function continueSeries(tx: Tx, row: ScheduleRow, now: number): Promise<void> {
  const next = nextRunOf(row, now);
  if (next === null) {
    await tx.run('UPDATE schedules SET runs = runs + 1, last_run_at = $1 WHERE id = $2', [now, row.id]);
    return;
  }
  const batchId = await copyRun(tx, row, next - row.run_at, now);
  await tx.run(`UPDATE schedules SET batch_id = $1, run_at = $2, state = 'scheduled', runs = runs + 1, last_run_at = $3, updated_at = $3 WHERE id = $4`,
    [batchId, next, now, row.id]);
}

const COPY_MESSAGES_SQL = `INSERT INTO messages (id, batch_id, expires_at, not_before, status, created_at, updated_at, ${columnList(COPIED_MESSAGE_COLUMNS)})
  SELECT u.new_id, $1, m.expires_at + $2, m.not_before + $2, 'SUBMITTED', $3, $3, ${columnList(COPIED_MESSAGE_COLUMNS, 'm')}
  FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS u(old_id, new_id, n) JOIN messages m ON m.id = u.old_id
  ORDER BY u.n`;

// Held: the new batch waits for its schedule (rules/batches.ts, heldBy('active', 'scheduled')).
const COPY_PARTS_SQL = `INSERT INTO parts (message_id, message_seq, upstream, client, batch_id, expires_at, not_before, held, state, status, updated_at,
    ${columnList(COPIED_PART_COLUMNS)})
  SELECT n.id, n.seq, n.upstream, n.client, n.batch_id, n.expires_at, n.not_before, 1, 'queued', 'SUBMITTED', $1, ${columnList(COPIED_PART_COLUMNS, 'p')}
  FROM unnest($2::text[], $3::text[]) AS u(old_id, new_id) JOIN messages n ON n.id = u.new_id JOIN parts p ON p.message_id = u.old_id`;

/** A new batch for the next run, `shift` ms after the released one; returns its id. */
async function copyRun(tx: Tx, row: ScheduleRow, shift: number, now: number): Promise<number> {
  const released = row.batch_id;
  await tx.run('UPDATE batches SET schedule_id = $1 WHERE id = $2', [row.id, released]);
  const old = (await tx.rows<{ id: string }>('SELECT id FROM messages WHERE batch_id = $1 ORDER BY seq', [released])).map((m) => m.id);
  const fresh = old.map(() => uuidV7(now));
  const created = await tx.row<{ id: number }>(
    `INSERT INTO batches (${columnList(COPIED_BATCH_COLUMNS)}, state, total, created_at, updated_at, schedule_id, next_turn_at)
     SELECT ${columnList(COPIED_BATCH_COLUMNS)}, 'active', $1, $2, $2, $3, CASE WHEN spacing_ms IS NULL THEN NULL ELSE $2::bigint END
     FROM batches WHERE id = $4 RETURNING id`,
    [old.length, now, row.id, released],
  );
  const batchId = created!.id;
  await tx.run(COPY_MESSAGES_SQL, [batchId, shift, now, old, fresh]);
  await tx.run(COPY_PARTS_SQL, [now, old, fresh]);
  const withEvents = await tx.rows<{ id: string; client: string; upstream: string; destination: string; parts: number }>(
    `SELECT m.id, m.client, m.upstream, m.destination, (SELECT COUNT(*) FROM parts p WHERE p.message_id = m.id) AS parts
     FROM messages m WHERE m.batch_id = $1 AND m.events = 1 ORDER BY m.seq`, [batchId]);
  writeNewMessageEvents(tx, withEvents.map((m) => ({
    route: m, payload: submittedEvent({ id: m.id, destination: m.destination, parts: { length: m.parts } }, batchId, now), at: now,
  })));
  return batchId;
}
