/**
 * The retention sweep's walk (`Store.pruneFinished`), decided once for both stores: the tables in
 * order, where a call starts, and where it goes on after looking at a window of one table. Each
 * store looks at the windows and deletes in its own dialect.
 *
 * A call walks by position, never by "what is left": the rows it must keep (a message kept by a
 * dead event, a batch with a message kept) are behind the cursor after one look, so a store with a
 * million of them still answers every call after looking at `limit` rows.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { PruneCounts, PruneCursor, PruneTable } from '../retention.js';

/**
 * How long a message SENT without a validity period may still get its receipt: an SMSC keeps
 * trying for its own default validity, commonly one to three days and rarely over a week.
 */
export const RECEIPT_WAIT_WITHOUT_VALIDITY_MS = 7 * 86_400_000;

/**
 * What keeps a message whose parts are all done from the sweep until its receipt can no longer
 * come, as an SQL condition on `m` that both stores use (`cutoff` is their parameter). A message
 * that asked for receipts (registered_delivery bits 0–1) and has no final status yet waits for
 * them as long as its validity (`expiresAt` was set from `expiryHour` at accept) or, without one,
 * `RECEIPT_WAIT_WITHOUT_VALIDITY_MS` after it was SENT; then retention's days count from there.
 * Deleted earlier, its receipt would be parked, pruned after a week, and never reach the client,
 * or match a later message the SMSC gave the same id.
 */
export function receiptNoLongerExpected(cutoff: string): string {
  return `(m.status NOT IN ('SUBMITTED', 'SENT') OR (m.registered_delivery & 3) = 0
      OR m.updated_at + COALESCE(m.expires_at - m.created_at, ${RECEIPT_WAIT_WITHOUT_VALIDITY_MS}) < ${cutoff})`;
}

/** Messages first: the batches they leave empty are deleted in the same sweep. */
export const PRUNE_TABLES: readonly PruneTable[] = ['messages', 'batches', 'inbound'];

/** Before the first row of `table`. Times are ms since the epoch; ids start at 1. */
export function startOf(table: PruneTable): PruneCursor {
  return { table, at: Number.MIN_SAFE_INTEGER, id: 0 };
}

/** What a store saw in one window: how many rows it looked at, the last of them, and how many it deleted. */
export interface PruneWindow {
  looked: number;
  last: { at: number; id: number } | undefined;
  deleted: number;
}

/** A call's progress: counts so far, where it is, and how many rows it may still look at. */
export interface PruneCall {
  counts: Omit<PruneCounts, 'next'>;
  cursor: PruneCursor;
  budget: number;
}

export function beginPrune(limit: number, after: PruneCursor | null | undefined): PruneCall {
  if (!Number.isInteger(limit) || limit < 1) throw new SmppdError(ErrorCode.INTERNAL, `pruneFinished takes a limit ≥ 1; got ${limit}`);
  return { counts: { messages: 0, batches: 0, inbound: 0 }, cursor: after ?? startOf('messages'), budget: limit };
}

/**
 * Adds a window's deletions. A full window ends the call where it stopped; a window that was not
 * full reached the cutoff of its table, and the call goes on with the next table and what is left
 * of its budget. Returns the call's answer when it is over, else undefined.
 */
export function afterWindow(call: PruneCall, window: PruneWindow): PruneCounts | undefined {
  call.counts[call.cursor.table] += window.deleted;
  if (window.looked >= call.budget && window.last) {
    return { ...call.counts, next: { table: call.cursor.table, at: window.last.at, id: window.last.id } };
  }
  call.budget -= window.looked;
  const following = PRUNE_TABLES[PRUNE_TABLES.indexOf(call.cursor.table) + 1];
  if (following === undefined) return { ...call.counts, next: null };
  call.cursor = startOf(following);
  return undefined;
}
