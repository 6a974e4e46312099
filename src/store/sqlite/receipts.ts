/**
 * Receipts: matched to their part by any of their keys within the upstream (any bind of it),
 * kept raw with the part whether they changed anything or not, or parked until the
 * submit_sm_resp that gives their part its key has been recorded (DESIGN.md: "A receipt can
 * arrive before the submit_sm_resp"). What a receipt does to its part: `../rules/receipts.ts`.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { ParkedDropped, ParkingLimit, ReceiptApplied, ReceiptRecord } from '../receipts.js';
import type { MessageState, PartStatusRow } from '../rows.js';
import {
  mergeReceipt, receiptChangedAt, tallyDropped, unparked, unparkedChangedAt, type ParkedRow, type ReceiptData,
} from '../rules/receipts.js';
import { loadMessageState, settleLoaded } from './part-status.js';
import type { Sql } from './sql.js';

/** The part with this key on this upstream (any bind); the latest message's when an SMSC has reused an id. */
export const FIND_PART_SQL = 'SELECT message_id, part FROM parts WHERE upstream = ? AND match_key = ? ORDER BY message_seq DESC, part DESC LIMIT 1';

function findPart(sql: Sql, upstream: string, key: string): { message_id: string; part: number } | undefined {
  return sql.get(FIND_PART_SQL, upstream, key);
}

export function applyReceipt(sql: Sql, receipt: ReceiptRecord): ReceiptApplied {
  // No id: nothing could ever unpark it.
  if (receipt.keys.length === 0) return { kind: 'dropped', reason: 'no_id' };
  for (const key of receipt.keys) {
    const found = findPart(sql, receipt.upstream, key);
    if (!found) continue;
    const { state, part } = partState(sql, found.message_id, found.part);
    const changed = applyToPart(sql, state, part, key, receipt, receiptChangedAt(receipt.receivedAt, part));
    return { kind: 'matched', messageId: part.message_id, part: part.part, key, changed };
  }
  park(sql, receipt);
  return { kind: 'parked' };
}

/** The message of a part just read, and that part among its (cached) parts. */
function partState(sql: Sql, messageId: string, partNo: number): { state: MessageState; part: PartStatusRow } {
  const state = loadMessageState(sql, messageId);
  const part = state?.parts.find((p) => p.part === partNo);
  if (!state || !part) throw new SmppdError(ErrorCode.INTERNAL, `receipt: message ${messageId} part ${partNo} vanished`, { messageId, part: partNo });
  return { state, part };
}

const PARKED_SQL = `SELECT DISTINCT r.id, r.upstream, r.keys, r.status, r.reason, r.raw, r.received_at
  FROM parked_receipt_keys k JOIN parked_receipts r ON r.id = k.parked_id
  WHERE k.upstream = ? AND k.key = ? ORDER BY r.received_at, r.id`;
const UPDATE_PART_STATUS_SQL = 'UPDATE parts SET status = ?, reason = ?, updated_at = ? WHERE message_id = ? AND part = ?';
const INSERT_RECEIPT_SQL = `INSERT INTO receipts (message_id, part, upstream, key, status, reason, changed, ignored, raw, received_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/**
 * After a part got its match key: applies the receipts parked under it, oldest first, and takes
 * them out of the parking. Returns how many.
 */
export function applyParked(sql: Sql, upstream: string, matchKey: string, messageId: string, partNo: number, now: number): number {
  if (!sql.parked.mayHave(sql, upstream, matchKey)) return 0;
  const parked = sql.all<ParkedRow & { keys: string }>(PARKED_SQL, upstream, matchKey);
  for (const r of parked) {
    // Looked up each time: the previous receipt may have settled the message (and a final one leaves the cache).
    const { state, part } = partState(sql, messageId, partNo);
    applyToPart(sql, state, part, matchKey, unparked(r), unparkedChangedAt(r.received_at, now));
    sql.run('DELETE FROM parked_receipts WHERE id = ?', r.id);
    sql.parked.unparked(r.upstream, JSON.parse(r.keys) as string[]);
  }
  return parked.length;
}

/**
 * Stores the receipt with its part and merges its status into `part` (one of `state.parts`) and
 * its message; returns whether the part's status moved.
 */
function applyToPart(sql: Sql, state: MessageState, part: PartStatusRow, key: string, receipt: ReceiptData, changedAt: number): boolean {
  const row = mergeReceipt(part, key, receipt, changedAt);
  if (row.changed === 1) sql.run(UPDATE_PART_STATUS_SQL, part.status, part.reason, part.updated_at, part.message_id, part.part);
  sql.run(
    INSERT_RECEIPT_SQL,
    row.message_id, row.part, row.upstream, row.key, row.status, row.reason, row.changed, row.ignored, row.raw, row.received_at,
  );
  if (row.changed === 1) settleLoaded(sql, state, { part: part.part, receipt: receipt.raw }, changedAt);
  return row.changed === 1;
}

function park(sql: Sql, receipt: ReceiptRecord): void {
  const keys = [...new Set(receipt.keys)];
  const inserted = sql.run(
    'INSERT INTO parked_receipts (upstream, keys, status, reason, raw, received_at) VALUES (?, ?, ?, ?, ?, ?)',
    receipt.upstream, JSON.stringify(keys), receipt.status, receipt.reason, JSON.stringify(receipt.raw), receipt.receivedAt,
  );
  for (const key of keys) {
    sql.run('INSERT INTO parked_receipt_keys (parked_id, upstream, key) VALUES (?, ?, ?)', inserted.lastInsertRowid, receipt.upstream, key);
  }
  sql.parked.parked(receipt.upstream, keys);
}

// Each upstream's newest `max` kept (on parked_receipts_upstream, read backwards), the rest deleted.
// Each deleted receipt's keys come back, to be taken out of the parked-key index.
const PRUNE_AGE_SQL = 'DELETE FROM parked_receipts WHERE upstream = ? AND received_at < ? RETURNING keys';
export const PRUNE_CAP_SQL = `DELETE FROM parked_receipts WHERE id IN (
  SELECT id FROM parked_receipts WHERE upstream = ? ORDER BY received_at DESC, id DESC LIMIT -1 OFFSET ?) RETURNING keys`;
const OTHERS = 'received_at < ? AND upstream NOT IN (SELECT value FROM json_each(?))';
const COUNT_OTHERS_SQL = `SELECT upstream, count(*) AS count FROM parked_receipts WHERE ${OTHERS} GROUP BY upstream`;
const PRUNE_OTHERS_SQL = `DELETE FROM parked_receipts WHERE ${OTHERS}`;

/** `ReceiptMatching.pruneParked` (their keys go with them: ON DELETE CASCADE). */
export function pruneParked(sql: Sql, limits: readonly ParkingLimit[], otherBefore: number): ParkedDropped[] {
  const unpark = (upstream: string, deleted: ReadonlyArray<{ keys: string }>): { upstream: string; count: number } => {
    for (const r of deleted) sql.parked.unparked(upstream, JSON.parse(r.keys) as string[]);
    return { upstream, count: deleted.length };
  };
  const age = limits.map((l) => unpark(l.upstream, sql.all<{ keys: string }>(PRUNE_AGE_SQL, l.upstream, l.before)));
  const cap = limits.map((l) => unpark(l.upstream, sql.all<{ keys: string }>(PRUNE_CAP_SQL, l.upstream, Math.max(0, l.max))));
  const known = JSON.stringify(limits.map((l) => l.upstream));
  const others = sql.all<{ upstream: string; count: number }>(COUNT_OTHERS_SQL, otherBefore, known);
  if (others.length > 0) {
    sql.run(PRUNE_OTHERS_SQL, otherBefore, known);
    // Receipts of upstreams this configuration does not name: they age out once after such a
    // change, and no more park. Reading the index again then is cheaper than their keys one by one.
    sql.parked.invalidate();
  }
  return [...tallyDropped('age', [...age, ...others]), ...tallyDropped('cap', cap)];
}
