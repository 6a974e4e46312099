/**
 * Receipts, as in the SQLite store: matched to their part by any of their keys within the
 * upstream, kept raw with the part (what a receipt does to its part: `../rules/receipts.ts`), or
 * parked until the submit outcome that gives a part that key. The receipt may arrive on any
 * instance's bind and the submit outcome be recorded by another: both hold the advisory locks of
 * the keys (`receiptKeyLocksSql`), so one of them sees what the other committed, and a parked
 * receipt is applied exactly once.
 */
import type { ParkedDropped, ParkingLimit, ReceiptRecord } from '../receipts.js';
import { mergeReceipt, tallyDropped, unparked, unparkedChangedAt, type ParkedRow, type ReceiptData } from '../rules/receipts.js';
import type { Tx } from './db.js';
import { settleLoaded, type MessageState, type PartStatusRow } from './part-status.js';

/**
 * For each receipt (`n`), the part with the first of its keys (`ord`) that any part has on its
 * upstream (any bind of any instance; the latest message's when an SMSC has reused an id).
 * Unlocked: with the keys' locks held no part gets or changes such a key meanwhile.
 */
export const FIND_PARTS_SQL = `SELECT DISTINCT ON (k.n) k.n, k.ord, found.message_id, found.part, k.key
  FROM unnest($1::int[], $2::text[], $3::text[], $4::int[]) AS k(n, upstream, key, ord)
  CROSS JOIN LATERAL (SELECT message_id, part FROM parts WHERE upstream = k.upstream AND match_key = k.key
    ORDER BY message_seq DESC, part DESC LIMIT 1) AS found
  ORDER BY k.n, k.ord`;

/** Where a receipt's part is in the table: its message and part, by which of the receipt's distinct keys (`ord`). */
export interface FoundPart {
  message_id: string;
  part: number;
  key: string;
  ord: number;
}

/** The parts the receipts find in the table, by the receipt's index; the keys' locks must be held. */
export async function findParts(tx: Tx, receipts: readonly ReceiptRecord[]): Promise<Map<number, FoundPart>> {
  const keys = receipts.flatMap((r, n) => [...new Set(r.keys)].map((key, ord) => ({ n, upstream: r.upstream, key, ord })));
  if (keys.length === 0) return new Map();
  const found = await tx.rows<FoundPart & { n: number }>(FIND_PARTS_SQL, [
    keys.map((k) => k.n), keys.map((k) => k.upstream), keys.map((k) => k.key), keys.map((k) => k.ord),
  ]);
  return new Map(found.map((f) => [f.n, f]));
}

/** A receipt key within its upstream, as one string (for maps of parts or receipts by key). */
export function receiptKeyId(upstream: string, key: string): string {
  return `${upstream}\u001f${key}`;
}

export interface ParkedReceipt extends ParkedRow {
  key: string;
}

// DELETE ... RETURNING: a receipt parked under two keys that two parts got at once (on two
// instances) is taken by one of them; the other waits for its row lock and finds it gone.
const TAKE_PARKED_SQL = `DELETE FROM parked_receipts r USING parked_receipt_keys k, unnest($1::text[], $2::text[]) AS w(upstream, key)
  WHERE k.parked_id = r.id AND k.upstream = w.upstream AND k.key = w.key
  RETURNING r.id, r.upstream, r.status, r.reason, r.raw, r.received_at, k.key`;

/** Receipts taken out of the parking, by upstream and key, each list in the order they arrived. */
export class ParkedByKey {
  readonly #lists = new Map<string, ParkedReceipt[]>();

  constructor(rows: ParkedReceipt[]) {
    rows.sort((a, b) => a.received_at - b.received_at || a.id - b.id);
    for (const r of rows) {
      const id = receiptKeyId(r.upstream, r.key);
      this.#lists.set(id, [...(this.#lists.get(id) ?? []), r]);
    }
  }

  /** The receipts parked under the key, once: a second take of the same key gets none. */
  take(upstream: string, key: string): ParkedReceipt[] {
    const id = receiptKeyId(upstream, key);
    const list = this.#lists.get(id) ?? [];
    this.#lists.delete(id);
    return list;
  }
}

/**
 * Takes the receipts parked under the keys out of the parking (the keys' locks held). The caller
 * applies them with `applyParked` in the same transaction.
 */
export async function takeParked(tx: Tx, wanted: ReadonlyArray<{ upstream: string; key: string }>): Promise<ParkedByKey> {
  if (wanted.length === 0) return new ParkedByKey([]);
  const rows = await tx.rows<ParkedReceipt>(TAKE_PARKED_SQL, [wanted.map((w) => w.upstream), wanted.map((w) => w.key)]);
  return new ParkedByKey(rows);
}

/**
 * After a part of a locked message got its match key: applies the receipts parked under it
 * (taken by `takeParked`), oldest first. The changes are dated `now` or later.
 */
export function applyParked(tx: Tx, state: MessageState, part: PartStatusRow, matchKey: string, parked: readonly ParkedRow[], now: number): void {
  for (const r of parked) applyToPart(tx, state, part, matchKey, unparked(r), unparkedChangedAt(r.received_at, now));
}

/** Stores the receipt with its part (of a locked message) and merges its status; returns whether the part's status moved. */
export function applyToPart(tx: Tx, state: MessageState, part: PartStatusRow, key: string, receipt: ReceiptData, changedAt: number): boolean {
  const row = mergeReceipt(part, key, receipt, changedAt);
  if (row.changed === 1) tx.writes.part(part);
  tx.writes.receipt(row);
  if (row.changed === 1) settleLoaded(tx, state, { part: part.part, receipt: receipt.raw }, changedAt);
  return row.changed === 1;
}

// Ids in the order given (ORDER BY u.n), so receipts parked under one key are applied in the
// order they arrived; each receipt's keys come back out of its `keys` column.
const PARK_SQL = `WITH r AS (
    INSERT INTO parked_receipts (upstream, keys, status, reason, raw, received_at)
    SELECT u.upstream, u.keys, u.status, u.reason, u.raw, u.received_at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
      WITH ORDINALITY AS u(upstream, keys, status, reason, raw, received_at, n)
    ORDER BY u.n
    RETURNING id, upstream, keys)
  INSERT INTO parked_receipt_keys (parked_id, upstream, key)
  SELECT DISTINCT r.id, r.upstream, k FROM r, json_array_elements_text(r.keys::json) AS k`;

/** Parks receipts that found no part, in the order given. */
export function park(tx: Tx, receipts: readonly ReceiptRecord[]): void {
  if (receipts.length === 0) return;
  tx.send(PARK_SQL, [
    receipts.map((r) => r.upstream), receipts.map((r) => JSON.stringify([...new Set(r.keys)])), receipts.map((r) => r.status),
    receipts.map((r) => r.reason), receipts.map((r) => JSON.stringify(r.raw)), receipts.map((r) => r.receivedAt),
  ]);
}

// Each upstream's newest `max` kept (on parked_receipts_upstream, read backwards), the rest deleted.
// Two instances pruning at once delete each row once: the second waits for the first's row locks
// and skips the rows it finds gone.
const PRUNE_AGE_SQL = 'DELETE FROM parked_receipts WHERE upstream = $1 AND received_at < $2';
export const PRUNE_CAP_SQL = `DELETE FROM parked_receipts WHERE id IN (
  SELECT id FROM parked_receipts WHERE upstream = $1 ORDER BY received_at DESC, id DESC OFFSET $2)`;
const PRUNE_OTHERS_SQL = `WITH deleted AS (DELETE FROM parked_receipts WHERE received_at < $1 AND upstream <> ALL($2::text[]) RETURNING upstream)
  SELECT upstream, count(*)::int AS count FROM deleted GROUP BY upstream`;

/** `ReceiptMatching.pruneParked` (their keys go with them: ON DELETE CASCADE). */
export async function pruneParked(tx: Tx, limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]> {
  const age: Array<{ upstream: string; count: number }> = [];
  const cap: Array<{ upstream: string; count: number }> = [];
  for (const l of limits) age.push({ upstream: l.upstream, count: await tx.run(PRUNE_AGE_SQL, [l.upstream, l.before]) });
  for (const l of limits) cap.push({ upstream: l.upstream, count: await tx.run(PRUNE_CAP_SQL, [l.upstream, Math.max(0, l.max)]) });
  const others = await tx.rows<{ upstream: string; count: number }>(PRUNE_OTHERS_SQL, [otherBefore, limits.map((l) => l.upstream)]);
  return [...tallyDropped('age', [...age, ...others]), ...tallyDropped('cap', cap)];
}
