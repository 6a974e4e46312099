/**
 * The status rows of messages in flight, kept in memory between their claim and their final
 * status. A message is read at its claim anyway; without this, its submit outcome and its receipt
 * would each read the message and its parts again (two statements, a third of a receipt's cost).
 *
 * It can be kept in step because this connection is the file's only writer (one process uses the
 * file: `SqliteStore.open`; README, Operations): every statement that changes a cached message's
 * status rows either works on the cached objects (claim, submit outcomes, receipts) or drops the
 * message from the cache (`forget`: local failures, requeues, retention); a rolled-back
 * transaction drops everything (`clear`), since its changes to the objects were not undone with it.
 *
 * What is kept: messages claimed whole that asked for a receipt, until their status is final;
 * and any message not final read for a change (a submit outcome or a receipt of a message not
 * kept), until it is final or pushed out by newer ones (the oldest put goes first).
 */
import type { MessageState } from '../rows.js';

/** Messages kept by default: a few seconds of claims and receipts at 10,000 messages a second. */
export const DEFAULT_STATUS_CACHE_SIZE = 50_000;

export class StatusCache {
  readonly #capacity: number;
  /** By message id, oldest first (a Map keeps insertion order): the oldest goes when full. */
  readonly #states = new Map<string, MessageState>();

  /** `capacity`: messages kept at most (0 keeps none: every read goes to the file). */
  constructor(capacity: number = DEFAULT_STATUS_CACHE_SIZE) {
    this.#capacity = Math.max(0, Math.floor(capacity));
  }

  get size(): number {
    return this.#states.size;
  }

  /** Lookups that found the message kept, and those that did not (for tests and diagnostics). */
  readonly lookups = { hits: 0, misses: 0 };

  /** The message's state as the file holds it now, or undefined when it is not kept. */
  get(messageId: string): MessageState | undefined {
    const state = this.#states.get(messageId);
    if (state) this.lookups.hits++;
    else this.lookups.misses++;
    return state;
  }

  /** Keeps `state`, which must be what the file holds now (read in this transaction, or written from it). */
  put(state: MessageState): void {
    if (this.#capacity === 0) return;
    this.#states.delete(state.message.id);
    this.#states.set(state.message.id, state);
    if (this.#states.size > this.#capacity) {
      const oldest = this.#states.keys().next();
      if (!oldest.done) this.#states.delete(oldest.value);
    }
  }

  /** Drops a message that a statement changed without going through its cached objects. */
  forget(messageId: string): void {
    this.#states.delete(messageId);
  }

  /** Drops every message: a transaction rolled back, or rows were deleted in bulk. */
  clear(): void {
    this.#states.clear();
  }
}
