/**
 * The rows a status change works on in memory (`part-status.ts`) and writes back (`writes.ts`):
 * the SQLite store's row types (`../sqlite/rows.ts`, shared) narrowed to the status columns, with
 * the columns of claims and leases that only this store has.
 */
import type { MessageRow, PartRow } from '../sqlite/rows.js';

/** A part's status columns, no bodies. Everything but the keys and `held` is written back when it changes. */
export type PartStatusRow = Pick<PartRow, 'message_id' | 'part' | 'upstream' | 'batch_id' | 'state' | 'status' | 'smsc_id' | 'match_key'
  | 'attempts' | 'reason' | 'updated_at'> & {
  message_seq: number;
  bind: string | null;
  not_before: number | null;
  expires_at: number | null;
  /** The instance whose claim holds the part while it is inflight. */
  claimed_by: string | null;
  lease_until: number | null;
};

export const PART_STATUS_COLUMNS = `p.message_id, p.part, p.message_seq, p.upstream, p.batch_id, p.state, p.status, p.smsc_id, p.match_key,
  p.bind, p.attempts, p.not_before, p.reason, p.updated_at, p.expires_at, p.claimed_by, p.lease_until`;

/** A message's status columns; status, reason, processed and updated_at are written back. */
export type MessageStatusRow = Pick<MessageRow, 'seq' | 'id' | 'client' | 'upstream' | 'batch_id' | 'destination' | 'status' | 'reason'
  | 'processed' | 'events' | 'updated_at'>;

/** A message and its parts (ordered by part), locked by this transaction, as this transaction sees them. */
export interface MessageState {
  message: MessageStatusRow;
  parts: PartStatusRow[];
}
