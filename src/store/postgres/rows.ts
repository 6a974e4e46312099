/**
 * The rows a status change works on in memory (`part-status.ts`) and writes back (`writes.ts`):
 * the shared status rows (`../rows.ts`) with the columns of claims and leases that only this
 * store has.
 */
import type { MessageState as SharedMessageState, MessageStatusRow as SharedMessageStatusRow, PartStatusRow as SharedPartStatusRow } from '../rows.js';

/** A part's status columns, no bodies. Everything but the keys and `held` is written back when it changes. */
export type PartStatusRow = SharedPartStatusRow & {
  message_seq: number;
  not_before: number | null;
  expires_at: number | null;
  /** The instance whose claim holds the part while it is inflight. */
  claimed_by: string | null;
  lease_until: number | null;
};

export const PART_STATUS_COLUMNS = `p.message_id, p.part, p.message_seq, p.upstream, p.batch_id, p.state, p.status, p.smsc_id, p.match_key,
  p.bind, p.attempts, p.not_before, p.reason, p.updated_at, p.expires_at, p.claimed_by, p.lease_until`;

/** A message's status columns; status, reason, processed and updated_at are written back. */
export type MessageStatusRow = SharedMessageStatusRow & { seq: number };

/** A message and its parts (ordered by part), locked by this transaction, as this transaction sees them. */
export type MessageState = SharedMessageState<MessageStatusRow, PartStatusRow>;

/** A part that leaves this instance's hands (done, or back in the queue): no claim holds it any more. */
export function releaseClaim(p: PartStatusRow): void {
  p.claimed_by = null;
  p.lease_until = null;
}
