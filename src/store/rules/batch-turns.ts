/**
 * The turns of a spaced batch, decided once for both stores (`../sqlite/batch-turns.ts`,
 * `../postgres/batch-turns.ts`). A message's turn comes `spacing_ms` after the previous one was
 * released, and only once that one has left the queue: the spacing holds between the messages as
 * the binds take them, not only as they are released, when the queue is slow to take them.
 */

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
