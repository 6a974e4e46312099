/**
 * The store's role for retention (`store.retentionDays`, the dispatch layer's `RetentionSweep`):
 * deleting what is old and finished with, a bounded walk at a time. Parked receipts are bounded
 * by `ReceiptMatching.pruneParked`, MO parts by `InboundMessages.expireInboundParts`. The
 * contract every role shares (commits, times) is in `store.ts`.
 */

/** The tables a retention sweep walks (`RetentionPruning.pruneFinished`), in this order. */
export type PruneTable = 'messages' | 'batches' | 'inbound';

/** Where a retention sweep goes on: returned by `pruneFinished`, handed to the next call as it is. */
export interface PruneCursor {
  /** The table the sweep is on. */
  table: PruneTable;
  /** The last row looked at, in the table's walking order: its time (created_at; inbound: received_at) and id (messages: seq). */
  at: number;
  id: number;
}

/** What one `pruneFinished` call deleted, and where the next call goes on. */
export interface PruneCounts {
  /** Messages, with their parts, receipts and delivered events' log. */
  messages: number;
  /** Batches, with their schedules. */
  batches: number;
  inbound: number;
  /** null: every row older than the cutoff has been looked at, the sweep is over. */
  next: PruneCursor | null;
}

export interface RetentionPruning {
  /**
   * Deletes, in one commit, what is older than `before` and finished with —
   * - messages created and last changed before `before`, every part done, no receipt still to come
   *   (a SENT message that asked for one waits for it through its validity, or a week without one:
   *   `rules/retention.ts` receiptNoLongerExpected), no event left in the outbox (pending, blocked or
   *   dead: a dead event keeps its message), with their parts, receipts and log of delivered events;
   * - batches created before `before` with no message left and no schedule still scheduled, with their schedules;
   * - inbound messages received before `before` with no event left in the outbox.
   * It walks messages, then batches, then inbound messages in time order from `after` (null or
   * absent: the start of a sweep), and looks at `limit` rows at most (≥ 1), so it deletes at most
   * `limit` messages and takes as long whatever lies behind: rows it must keep are passed once per
   * sweep, not once per call. Call again with `next` until it is null. Outbox rows and parked
   * receipts (`pruneParked`) are never deleted here.
   */
  pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts>;
}
