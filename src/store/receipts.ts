/**
 * The store's role for delivery receipts: matching each to its part by key, parking the ones that
 * come before their part has the key, and bounding the parking. The contract every role shares
 * (commits, times) is in `store.ts`.
 */
import type { DeliveryStatus } from '../sms/status.js';

/** A receipt, read and matched or to be parked. */
export interface ReceiptRecord {
  upstream: string;
  /** Candidate keys, best first (the domain's `candidateKeys`); empty when the receipt names no id. */
  keys: string[];
  /** The new status it means, or null (unknown stat: stored raw, no change). */
  status: DeliveryStatus | null;
  reason: string | null;
  /** The receipt as read (raw text, fields, warnings) — kept with the part for operators and webhooks. */
  raw: Record<string, unknown>;
  receivedAt: number;
}

export type ReceiptApplied =
  /** Found its part; `changed` false when the merge ignored it (duplicate, regression, after a final). */
  | { kind: 'matched'; messageId: string; part: number; key: string; changed: boolean }
  /** No part has any of its keys yet: parked until one does. */
  | { kind: 'parked' }
  /** It names no id (no keys): no part can ever have it, so it is neither matched nor parked. */
  | { kind: 'dropped'; reason: 'no_id' };

/** How long and how many parked receipts one upstream keeps (`upstreams[].parkedReceipts`). */
export interface ParkingLimit {
  upstream: string;
  /** Wall-clock ms: receipts parked before this are dropped ('age'). */
  before: number;
  /** Receipts kept at most, ≥ 0: the oldest beyond this are dropped ('cap'). */
  max: number;
}

/** Parked receipts `pruneParked` dropped, per upstream and reason; only counts above 0. */
export interface ParkedDropped {
  upstream: string;
  reason: 'age' | 'cap';
  count: number;
}

export interface ReceiptMatching {
  /**
   * Matches a receipt by any of its keys within its upstream, merges its status, or parks it; one
   * with no keys is dropped (`ReceiptApplied`), never parked.
   */
  applyReceipt(receipt: ReceiptRecord): Promise<ReceiptApplied>;

  /**
   * Bounds the parking: receipts of messages this smppd never sent (another system on the same
   * account, or an SMSC sending ids never issued) would otherwise pile up. For each upstream of
   * `limits`: drops the receipts parked before its `before`, then the oldest beyond its `max`
   * (received_at, then id). Receipts of upstreams not in `limits` (renamed or removed, or known
   * only to another instance's configuration) are dropped when parked before `otherBefore`. One
   * commit. Returns what it dropped.
   */
  pruneParked(limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]>;
}
