/**
 * The runs of recurring schedules, decided once for both stores. A recurring schedule holds the
 * batch of its next run; when that run is released (its time came, or send-now), the store makes
 * the batch of the run after it in the same transaction: a copy of the released batch's messages
 * with new ids, their composed parts, SUBMITTED and held, their validity moved by the time
 * between the two runs, and points the schedule at it. The released batch keeps the schedule's id
 * (`batches.schedule_id`), so every run still says which series it came from.
 */
import { nextRunAfter, type Recurrence } from '../../core/recurrence.js';
import type { Migration } from './migrations.js';
import type { NewSchedule } from '../intake.js';
import type { ScheduleRow } from '../rows.js';

/** The columns of a schedule that hold its series: `seriesValues`, in this order. */
export const SERIES_COLUMNS = ['every', 'max_runs', 'until_at', 'zone', 'anchor_at'] as const;

/** A new schedule's series columns (`SERIES_COLUMNS`); undefined for a schedule of one run. */
export function seriesValues(schedule: NewSchedule): [string, number | null, number | null, string, number] | undefined {
  const r = schedule.recurrence;
  return r && [r.every, r.count, r.until, r.zone, schedule.runAt];
}

/** The series of a schedule row; null for one run. */
export function recurrenceOf(row: ScheduleRow): Recurrence | null {
  if (row.every === null || row.zone === null) return null;
  return { every: row.every, count: row.max_runs, until: row.until_at, zone: row.zone };
}

/**
 * After the release at `now` of the run the row holds (at `row.run_at`, or earlier by send-now):
 * the time of the next run, or null when the series has ended (or never was one). The next run
 * is the first of the series after both the released run's time and now: a run sent early is
 * not sent again at its own time, and the runs missed while no instance ran are passed over.
 */
export function nextRunOf(row: ScheduleRow, now: number): number | null {
  const rule = recurrenceOf(row);
  if (rule === null || row.anchor_at === null) return null;
  return nextRunAfter(rule, row.anchor_at, row.runs + 1, Math.max(now, row.run_at));
}

/**
 * Which columns a run's copy takes from the released run as they are, and which it writes itself
 * or leaves to their defaults (a new message's state): every column of batches, messages and
 * parts is in one list of each pair, and a unit test holds the lists to the schema, so a column
 * added later is copied or not by a decision.
 */
export const COPIED_BATCH_COLUMNS = ['client', 'sender_id', 'req_type', 'message_type', 'campaign_name', 'spacing_ms'] as const;
/** A spaced run starts its turns afresh (`batch-turns.ts`): from its release, with no message released yet. */
export const NEW_BATCH_COLUMNS = [
  'id', 'state', 'total', 'processed', 'created_at', 'updated_at', 'schedule_id', 'turns_through', 'next_turn_at', 'turn_waits',
] as const;

/** The message columns a run's copy takes from the released one as they are (both stores' INSERT … SELECT). */
export const COPIED_MESSAGE_COLUMNS = ['client', 'upstream', 'route', 'source', 'destination', 'text', 'message_type', 'encoding', 'campaign_name',
  'registered_delivery', 'source_ton', 'source_npi', 'dest_ton', 'dest_npi', 'validity_period', 'events',
  'pe_id', 'template_id', 'telemarketer_id', 'vendor_tlvs'] as const;

export const NEW_MESSAGE_COLUMNS = ['seq', 'id', 'batch_id', 'expires_at', 'not_before', 'status', 'reason', 'processed', 'created_at', 'updated_at'] as const;

/** The part columns a run's copy takes as they are: the composed submit_sm body, concatenation reference included. */
export const COPIED_PART_COLUMNS = ['part', 'data_coding', 'esm_class', 'short_message', 'sar_ref', 'sar_total', 'sar_seq', 'payload'] as const;
/** Its message's, or a new part's state; `claimed_by` and `lease_until` are PostgreSQL's only. */
export const NEW_PART_COLUMNS = ['message_id', 'message_seq', 'upstream', 'client', 'batch_id', 'expires_at', 'not_before', 'held', 'state', 'status',
  'updated_at', 'smsc_id', 'match_key', 'bind', 'attempts', 'reason', 'sent_at', 'claimed_by', 'lease_until'] as const;

/** `columns` as a SQL list, each of table `alias` when given. */
export function columnList(columns: readonly string[], alias?: string): string {
  return columns.map((c) => (alias === undefined ? c : `${alias}.${c}`)).join(', ');
}

/**
 * Migration 16's schema, the same in both stores but for the types: the series of a schedule,
 * its runs so far and the last one's time, and the schedule of a batch that was one of its runs.
 * Schedules released before it count one run.
 */
export function recurrenceMigration(integer: 'INTEGER' | 'BIGINT'): Migration {
  return {
    version: 16,
    name: 'recurring schedules',
    sql: `
ALTER TABLE schedules ADD COLUMN every TEXT CHECK (every IN ('DAILY', 'WEEKLY', 'MONTHLY'));
ALTER TABLE schedules ADD COLUMN max_runs INTEGER;
ALTER TABLE schedules ADD COLUMN until_at ${integer};
ALTER TABLE schedules ADD COLUMN zone TEXT;
ALTER TABLE schedules ADD COLUMN anchor_at ${integer};
ALTER TABLE schedules ADD COLUMN runs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedules ADD COLUMN last_run_at ${integer};
UPDATE schedules SET runs = 1, last_run_at = updated_at WHERE state = 'released';
ALTER TABLE batches ADD COLUMN schedule_id ${integer};
`,
  };
}
