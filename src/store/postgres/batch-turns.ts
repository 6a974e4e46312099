/**
 * The turns of a spaced batch, as in the SQLite store (`../sqlite/batch-turns.ts`; the rules:
 * `../rules/batch-turns.ts`). A turn takes the batch's gate and reads the batch again under it,
 * so when several instances find the same turn due, one releases the message and the others find
 * the turn moved on.
 */
import type { Migration } from '../rules/migrations.js';
import { batchTurnsMigration, decideTurn, type TurnRow } from '../rules/batch-turns.js';
import type { TurnsReleased } from '../claims.js';
import type { Tx } from './db.js';
import { lockBatchGate, type LockSpaces } from './locks.js';

/** Migration 15, with an index that walks a batch's unfinished messages in order (SQLite's rowid does). */
export const PG_BATCH_TURNS_MIGRATION: Migration = batchTurnsMigration('BIGINT', 'SMALLINT',
  'CREATE INDEX messages_batch_seq ON messages (batch_id, seq) WHERE batch_id IS NOT NULL AND processed = 0;\n');

const TURNING = `FROM batches b LEFT JOIN schedules s ON s.batch_id = b.id
  WHERE b.next_turn_at IS NOT NULL AND b.state = 'active' AND (s.id IS NULL OR s.state = 'released')`;
const TURN_COLUMNS = 'b.id, b.spacing_ms, b.turns_through, b.next_turn_at, b.turn_waits';

/** Releases the next message of every spaced batch whose turn has come; returns how many, and when the next turn is due. */
export async function releaseTurns(tx: Tx, spaces: LockSpaces, now: number): Promise<TurnsReleased> {
  let released = 0;
  const due = await tx.rows<{ id: number }>(`SELECT b.id ${TURNING} AND b.next_turn_at <= $1 ORDER BY b.id`, [now]);
  for (const { id } of due) {
    await lockBatchGate(tx, spaces, id);
    const batch = await tx.row<TurnRow>(`SELECT ${TURN_COLUMNS} ${TURNING} AND b.next_turn_at <= $1 AND b.id = $2`, [now, id]);
    if (!batch) continue; // another instance took this turn
    const waiting = batch.turns_through > 0 && (await tx.row(
      "SELECT 1 FROM messages m JOIN parts p ON p.message_id = m.id WHERE m.seq = $1 AND p.state = 'queued' LIMIT 1", [batch.turns_through],
    )) !== undefined;
    const next = waiting ? undefined : await tx.row<{ seq: number; id: string }>(
      'SELECT seq, id FROM messages WHERE batch_id = $1 AND seq > $2 AND processed = 0 ORDER BY seq LIMIT 1', [batch.id, batch.turns_through]);
    const turn = decideTurn(batch, now, waiting, next?.seq ?? null);
    if (turn.release !== null && next) {
      // Locked in part order, the order claims lock a message's parts in.
      await tx.run(`UPDATE parts SET held = 0 WHERE (message_id, part) IN (
        SELECT message_id, part FROM parts WHERE message_id = $1 AND state <> 'done' ORDER BY part FOR UPDATE)`, [next.id]);
      released++;
    }
    await tx.run('UPDATE batches SET turns_through = $1, next_turn_at = $2, turn_waits = $3 WHERE id = $4',
      [turn.turnsThrough, turn.nextTurnAt, turn.turnWaits, batch.id]);
  }
  return { released, nextAt: (await tx.row<{ at: number | null }>(`SELECT MIN(b.next_turn_at) AS at ${TURNING}`))?.at ?? null };
}
