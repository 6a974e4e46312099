/**
 * The turns of a spaced batch (sendbulk's `delay`, messaging-service-api.md §4.1 and §8: "the
 * delay field throttles delivery on bulk sends"): its messages are stored held and released one
 * at a time, in order, `spacing_ms` apart. The rules: `../rules/batch-turns.ts`.
 */
import type { Migration } from '../rules/migrations.js';
import { batchTurnsMigration, decideTurn, type TurnRow } from '../rules/batch-turns.js';
import type { TurnsReleased } from '../claims.js';
import type { Sql } from './sql.js';

/** Migration 15 (listed in `migrations.ts`; never edited once released). */
export const BATCH_TURNS_MIGRATION: Migration = batchTurnsMigration('INTEGER', 'INTEGER');

/** Active spaced batches whose next turn has come and whose schedule (if any) is released. */
const TURNING = `FROM batches b INDEXED BY batches_turns LEFT JOIN schedules s ON s.batch_id = b.id
  WHERE b.next_turn_at IS NOT NULL AND b.state = 'active' AND (s.id IS NULL OR s.state = 'released')`;
const DUE_SQL = `SELECT b.id, b.spacing_ms, b.turns_through, b.next_turn_at, b.turn_waits ${TURNING} AND b.next_turn_at <= ? ORDER BY b.next_turn_at, b.id`;
const NEXT_DUE_SQL = `SELECT MIN(b.next_turn_at) AS at ${TURNING}`;

/** Whether the message released last still waits in the queue: the next waits for it to be taken. */
const STILL_QUEUED_SQL = `SELECT 1 FROM messages m JOIN parts p ON p.message_id = m.id
  WHERE m.seq = ? AND p.state = 'queued' LIMIT 1`;

/** The batch's next message with something left to send (messages_batch holds seq in order). */
const NEXT_SQL = `SELECT seq, id FROM messages INDEXED BY messages_batch
  WHERE batch_id = ? AND seq > ? AND processed = 0 ORDER BY seq LIMIT 1`;

/**
 * Releases the next message of every spaced batch whose turn has come. Returns how many, and the
 * earliest time a turn is due next (null: no spaced batch waits), for the dispatcher's timer.
 */
export function releaseTurns(sql: Sql, now: number): TurnsReleased {
  let released = 0;
  for (const batch of sql.all<TurnRow>(DUE_SQL, now)) {
    const waiting = batch.turns_through > 0 && sql.get(STILL_QUEUED_SQL, batch.turns_through) !== undefined;
    const next = waiting ? undefined : sql.get<{ seq: number; id: string }>(NEXT_SQL, batch.id, batch.turns_through);
    const turn = decideTurn(batch, now, waiting, next?.seq ?? null);
    if (turn.release !== null && next) {
      sql.run("UPDATE parts SET held = 0 WHERE message_id = ? AND state <> 'done'", next.id);
      released++;
    }
    sql.run('UPDATE batches SET turns_through = ?, next_turn_at = ?, turn_waits = ? WHERE id = ?',
      turn.turnsThrough, turn.nextTurnAt, turn.turnWaits, batch.id);
  }
  return { released, nextAt: sql.get<{ at: number | null }>(NEXT_DUE_SQL)?.at ?? null };
}
