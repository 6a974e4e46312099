/**
 * Receipts, as in the SQLite store (`../sqlite/receipts.ts`): matched to their part by any of
 * their keys within the upstream, kept raw with the part, or parked until the submit outcome that
 * gives a part that key. The receipt may arrive on any instance's bind and the submit outcome be
 * recorded by another: both hold the advisory locks of the keys (`lockReceiptKeys`), so one of
 * them sees what the other committed, and a parked receipt is applied exactly once.
 */
import { mergeStatus, type DeliveryStatus } from '../../sms/status.js';
import type { ReceiptApplied, ReceiptRecord } from '../store.js';
import type { Tx } from './db.js';
import { lockReceiptKeys, type LockSpaces } from './locks.js';
import { LOCK_COLUMNS, settleLoaded, statesOf, type LockRow, type MessageState, type PartStatusRow } from './part-status.js';

/** A receipt as it is applied, fresh or unparked. */
interface ReceiptData {
  upstream: string;
  status: DeliveryStatus | null;
  reason: string | null;
  raw: Record<string, unknown>;
  receivedAt: number;
}

interface ParkedRow {
  id: number;
  upstream: string;
  status: DeliveryStatus | null;
  reason: string | null;
  raw: string;
  received_at: number;
}

/**
 * The part with the first of the keys that any part has on this upstream (any bind of any
 * instance; the latest message's when an SMSC has reused an id), locked with its message and
 * siblings in the same statement. `found_part` and `found_key` say which part and key matched.
 */
export const FIND_PART_SQL = `WITH f AS (
    SELECT found.message_id, found.part, k.key FROM unnest($2::text[]) WITH ORDINALITY AS k(key, n)
    CROSS JOIN LATERAL (SELECT message_id, part FROM parts WHERE upstream = $1 AND match_key = k.key
      ORDER BY message_seq DESC, part DESC LIMIT 1) AS found
    ORDER BY k.n LIMIT 1)
  SELECT ${LOCK_COLUMNS}, f.part AS found_part, f.key AS found_key
  FROM f JOIN messages m ON m.id = f.message_id JOIN parts p ON p.message_id = m.id
  ORDER BY p.part
  FOR UPDATE OF m, p`;

export async function applyReceipt(tx: Tx, spaces: LockSpaces, receipt: ReceiptRecord): Promise<ReceiptApplied> {
  await lockReceiptKeys(tx, spaces, receipt.upstream, receipt.keys);
  const rows = await tx.rows<LockRow & { found_part: number; found_key: string }>(FIND_PART_SQL, [receipt.upstream, receipt.keys]);
  const [state] = statesOf(rows);
  const found = rows[0];
  const part = state?.parts.find((p) => p.part === found?.found_part);
  if (!state || !found || !part) {
    await park(tx, receipt);
    return { kind: 'parked' };
  }
  // Never dated before the part's last change: a receipt read just before its submit_sm_resp
  // was recorded would otherwise date DELIVERED before SENT.
  const changed = applyToPart(tx, state, part, found.found_key, receipt, Math.max(receipt.receivedAt, part.updated_at));
  return { kind: 'matched', messageId: state.message.id, part: part.part, key: found.found_key, changed };
}

export interface ParkedReceipt extends ParkedRow {
  key: string;
}

// DELETE ... RETURNING: a receipt parked under two keys that two parts got at once (on two
// instances) is taken by one of them; the other waits for its row lock and finds it gone.
const TAKE_PARKED_SQL = `DELETE FROM parked_receipts r USING parked_receipt_keys k
  WHERE k.parked_id = r.id AND k.upstream = $1 AND k.key = ANY($2::text[])
  RETURNING r.id, r.upstream, r.status, r.reason, r.raw, r.received_at, k.key`;

/**
 * Takes the receipts parked under `keys` out of the parking (the keys' locks held): by key, each
 * list in the order they arrived. The caller applies them with `applyParked` in the same transaction.
 */
export async function takeParked(tx: Tx, upstream: string, keys: readonly string[]): Promise<Map<string, ParkedReceipt[]>> {
  const byKey = new Map<string, ParkedReceipt[]>();
  if (keys.length === 0) return byKey;
  const rows = await tx.rows<ParkedReceipt>(TAKE_PARKED_SQL, [upstream, [...new Set(keys)]]);
  rows.sort((a, b) => a.received_at - b.received_at || a.id - b.id);
  for (const r of rows) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  return byKey;
}

/**
 * After a part of a locked message got its match key: applies the receipts parked under it
 * (taken by `takeParked`), oldest first. The changes are dated `now` or later.
 */
export function applyParked(tx: Tx, state: MessageState, part: PartStatusRow, matchKey: string, parked: readonly ParkedRow[], now: number): void {
  for (const r of parked) {
    applyToPart(tx, state, part, matchKey, {
      upstream: r.upstream,
      status: r.status,
      reason: r.reason,
      raw: JSON.parse(r.raw) as Record<string, unknown>,
      receivedAt: r.received_at,
    }, Math.max(now, r.received_at));
  }
}

/** Stores the receipt with its part (of a locked message) and merges its status; returns whether the part's status moved. */
function applyToPart(tx: Tx, state: MessageState, part: PartStatusRow, key: string, receipt: ReceiptData, changedAt: number): boolean {
  const merged = receipt.status === null ? null : mergeStatus(part.status, receipt.status);
  const changed = merged?.changed ?? false;
  if (merged?.changed) {
    part.status = merged.status;
    part.reason = receipt.reason;
    part.updated_at = changedAt;
    tx.writes.part(part);
  }
  tx.writes.receipt({
    message_id: part.message_id, part: part.part, upstream: receipt.upstream, key, status: receipt.status, reason: receipt.reason,
    changed: changed ? 1 : 0, ignored: merged === null ? 'unknown' : (merged.ignored ?? null), raw: JSON.stringify(receipt.raw),
    received_at: receipt.receivedAt,
  });
  if (changed) settleLoaded(tx, state, { part: part.part, receipt: receipt.raw }, changedAt);
  return changed;
}

async function park(tx: Tx, receipt: ReceiptRecord): Promise<void> {
  await tx.run(
    `WITH r AS (
       INSERT INTO parked_receipts (upstream, keys, status, reason, raw, received_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
     INSERT INTO parked_receipt_keys (parked_id, upstream, key) SELECT r.id, $1, k FROM r, unnest($7::text[]) AS k`,
    [receipt.upstream, JSON.stringify([...new Set(receipt.keys)]), receipt.status, receipt.reason, JSON.stringify(receipt.raw), receipt.receivedAt,
      [...new Set(receipt.keys)]],
  );
}

/** Deletes receipts parked before `before` (their keys go with them: ON DELETE CASCADE). */
export async function pruneParked(tx: Tx, before: number): Promise<number> {
  return tx.run('DELETE FROM parked_receipts WHERE received_at < $1', [before]);
}
