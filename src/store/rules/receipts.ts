/**
 * What a receipt does to its part, decided once for both stores over the part row in memory: the
 * part merges the receipt's status, and the receipt is kept with the part whether it changed
 * anything or not (with why not). How a receipt finds its part, or is parked until one has its
 * key, is each store's own I/O.
 */
import type { DeliveryStatus } from '../../sms/status.js';
import type { ParkedDropped } from '../receipts.js';
import type { PartStatusRow } from '../rows.js';
import { mergePartStatus } from './part-status.js';

/** A receipt as it is applied, fresh or unparked. */
export interface ReceiptData {
  upstream: string;
  status: DeliveryStatus | null;
  reason: string | null;
  raw: Record<string, unknown>;
  receivedAt: number;
}

/** A parked receipt as both stores keep it (`raw` as JSON text). */
export interface ParkedRow {
  id: number;
  upstream: string;
  status: DeliveryStatus | null;
  reason: string | null;
  raw: string;
  received_at: number;
}

/** A row of the receipts table: every receipt matched to a part, the ignored ones too. */
export interface ReceiptInsert {
  message_id: string;
  part: number;
  upstream: string;
  key: string;
  status: string | null;
  reason: string | null;
  /** 1 when it moved the part's status. */
  changed: 0 | 1;
  /** Why it changed nothing: the merge's reason, or 'unknown' for a receipt without a status we know. */
  ignored: string | null;
  raw: string;
  received_at: number;
}

/**
 * When a fresh receipt's change happens: never before the part's last change. A receipt read
 * just before its submit_sm_resp was recorded would otherwise date DELIVERED before SENT, and a
 * receiver that orders by timestamp would drop it.
 */
export function receiptChangedAt(receivedAt: number, part: Pick<PartStatusRow, 'updated_at'>): number {
  return Math.max(receivedAt, part.updated_at);
}

/**
 * A receipt that came before its part had its key (parked, or held in the same commit), applied
 * when the submit outcome gives it: dated `now` (after the SENT of the submit), or later.
 */
export function unparkedChangedAt(receivedAt: number, now: number): number {
  return Math.max(now, receivedAt);
}

/** A parked receipt as it is applied; it keeps its own receivedAt. */
export function unparked(parked: ParkedRow): ReceiptData {
  return {
    upstream: parked.upstream,
    status: parked.status,
    reason: parked.reason,
    raw: JSON.parse(parked.raw) as Record<string, unknown>,
    receivedAt: parked.received_at,
  };
}

/**
 * Merges the receipt's status into the part (status, reason and updated_at in memory, when it
 * moved) and returns the receipt's row; `changed` says whether the part has to be written and its
 * message settled.
 */
export function mergeReceipt(
  part: Pick<PartStatusRow, 'message_id' | 'part' | 'status' | 'reason' | 'updated_at'>, key: string, receipt: ReceiptData, changedAt: number,
): ReceiptInsert {
  const merged = receipt.status === null ? null : mergePartStatus(part, receipt.status, receipt.reason);
  const changed = merged?.changed ?? false;
  if (changed) part.updated_at = changedAt;
  return {
    message_id: part.message_id, part: part.part, upstream: receipt.upstream, key, status: receipt.status, reason: receipt.reason,
    changed: changed ? 1 : 0, ignored: merged === null ? 'unknown' : (merged.ignored ?? null), raw: JSON.stringify(receipt.raw),
    received_at: receipt.receivedAt,
  };
}

/**
 * A prune's deletions as `pruneParked` answers them, one entry per upstream with a count above 0:
 * `deleted` holds statements' row counts, or a count of 1 per row a RETURNING gave back.
 */
export function tallyDropped(reason: ParkedDropped['reason'], deleted: ReadonlyArray<{ upstream: string; count: number }>): ParkedDropped[] {
  const byUpstream = new Map<string, number>();
  for (const d of deleted) if (d.count > 0) byUpstream.set(d.upstream, (byUpstream.get(d.upstream) ?? 0) + d.count);
  return [...byUpstream].map(([upstream, count]) => ({ upstream, reason, count }));
}
