/**
 * The turns of a spaced batch, decided once for both stores (`../sqlite/batch-turns.ts`,
 * `../postgres/batch-turns.ts`). A message's turn comes `spacing_ms` after the previous one was
 * released, and only once that one has left the queue: the spacing holds between the messages as
 * the binds take them, not only as they are released, when the queue is slow to take them.
 */

import type { Migration } from './migrations.js';

/**
 * Migration 15's schema, the same in both stores but for the types: a batch's spacing and how far
 * its turns have gone. `turns_through` is the `seq` of the last message released (0: none yet),
 * `next_turn_at` when the next may go (NULL: none left, or not spaced), `turn_waits` whether the
 * message released last was still queued when its turn ended. `extra`: a store's own statements.
 */
export function batchTurnsMigration(integer: 'INTEGER' | 'BIGINT', flag: 'INTEGER' | 'SMALLINT', extra = ''): Migration {
  return {
    version: 15,
    name: 'spaced batches',
    sql: `
ALTER TABLE batches ADD COLUMN spacing_ms ${integer};
ALTER TABLE batches ADD COLUMN turns_through ${integer} NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN next_turn_at ${integer};
ALTER TABLE batches ADD COLUMN turn_waits ${flag} NOT NULL DEFAULT 0;
CREATE INDEX batches_turns ON batches (next_turn_at) WHERE next_turn_at IS NOT NULL;
${extra}`,
  };
}

/** A spaced batch as a turn reads it. */
export interface TurnRow {
  id: number;
  spacing_ms: number;
  /** The seq of the message released last; 0 before the first. */
  turns_through: number;
  next_turn_at: number;
  /** 1 while the message released last was found still queued at its turn's end. */
  turn_waits: number;
}

/** How often a turn looks again whether the previous message has left the queue. */
export const TURN_RECHECK_MS = 100;

export interface TurnDecision {
  /** The message to release now (its seq), if any. */
  release: number | null;
  turnsThrough: number;
  /** Null: no message is left to release (an append gives the batch turns again). */
  nextTurnAt: number | null;
  turnWaits: 0 | 1;
}

/**
 * What a due turn does. `previousQueued`: the message released last still waits to be taken;
 * `nextSeq`: the batch's next message with something to send, null when none is left.
 *
 * When the previous message was found waiting, the moment it was taken is known only to lie
 * before `now`: the next turn then comes a whole spacing after `now`, so the gap between the two
 * is never shorter than asked.
 */
export function decideTurn(batch: TurnRow, now: number, previousQueued: boolean, nextSeq: number | null): TurnDecision {
  const spacing = batch.spacing_ms;
  if (previousQueued) {
    return { release: null, turnsThrough: batch.turns_through, nextTurnAt: now + Math.min(spacing, TURN_RECHECK_MS), turnWaits: 1 };
  }
  if (batch.turn_waits === 1) return { release: null, turnsThrough: batch.turns_through, nextTurnAt: now + spacing, turnWaits: 0 };
  if (nextSeq === null) return { release: null, turnsThrough: batch.turns_through, nextTurnAt: null, turnWaits: 0 };
  return { release: nextSeq, turnsThrough: nextSeq, nextTurnAt: now + spacing, turnWaits: 0 };
}
