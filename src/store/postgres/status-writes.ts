/**
 * Submit outcomes and receipts, group-committed together: one transaction takes the outcomes and
 * receipts that queued while the previous ones ran, in the order they came, in five statements
 * whatever their number (the keys' locks, the parts the receipts name, the messages' locks, the
 * receipts parked under the outcomes' keys, and the parking of receipts that found no part),
 * then the one flush of every row they changed (`writes.ts`).
 *
 * A receipt usually comes tens of milliseconds after its submit_sm_resp. When its outcome is in
 * the same transaction, the receipt finds the part the outcome has just given its key to, and the
 * part and its message are written once, SENT and DELIVERED in one row version each (their two
 * events still go out, in order). In separate transactions the receipt would wait for the
 * outcome's key locks, then lock, read and write the same rows again.
 *
 * The result is what running the writes one at a time, in their order, would give: a receipt
 * that comes before the outcome giving its key is answered 'parked', and that outcome applies
 * it, dated as an unparked receipt (`unparkedChangedAt`); it never reaches the parking table.
 */
import type { ReceiptApplied, ReceiptRecord } from '../receipts.js';
import { receiptChangedAt, unparkedChangedAt } from '../rules/receipts.js';
import type { Tx } from './db.js';
import { receiptKeyLocksSql } from './locks.js';
import { lockMessages, type MessageState, type PartStatusRow } from './part-status.js';
import { applyParked, applyToPart, findParts, park, receiptKeyId, takeParked, type FoundPart, type ParkedByKey } from './receipts.js';
import { keysToMatch, recordOne, type InstanceContext, type SubmitOutcome } from './submit.js';

export type StatusWrite =
  | { kind: 'submit'; outcome: SubmitOutcome }
  | { kind: 'receipt'; receipt: ReceiptRecord };

/** A submit outcome's result: nothing to say. A receipt's: what it found. */
export type StatusWriteResult = ReceiptApplied | undefined;

// The keys of every outcome (the upstream is each message's) and of every receipt, in hash order
// (`receiptKeyLocksSql`): two transactions never wait on each other's keys in a cycle. Then the
// messages, in the next statements.
export const LOCK_KEYS_SQL = receiptKeyLocksSql('$1', `(
    SELECT m.upstream, w.key FROM unnest($2::text[], $3::text[]) AS w(message_id, key) JOIN messages m ON m.id = w.message_id
    UNION ALL
    SELECT r.upstream, r.key FROM unnest($4::text[], $5::text[]) AS r(upstream, key)
  ) AS u`);

/**
 * What a write locks, for the group commit (`WriteBatcher`'s `keysOf`): the receipt keys it gives
 * or looks up (without their upstream: an outcome does not know it; two upstreams' equal keys
 * only wait for each other), and an outcome's message.
 */
export function statusWriteKeys(w: StatusWrite): string[] {
  if (w.kind === 'receipt') return w.receipt.keys.map((key) => `k:${key}`);
  const keys = [`m:${w.outcome.messageId}`];
  for (const r of w.outcome.results) if (r.kind === 'accepted') keys.push(`k:${r.matchKey}`);
  return keys;
}

/** A part that got its key from an outcome earlier in this transaction. */
interface KeyedPart {
  state: MessageState;
  part: PartStatusRow;
}

/** A receipt of this transaction that found no part at its turn: parked, unless a later outcome here gives a part its key. */
interface HeldReceipt {
  receipt: ReceiptRecord;
  taken: boolean;
}

/**
 * Applies submit outcomes and receipts in the order given. A submit outcome naming an unknown
 * message or part is a caller's bug and fails the transaction (the batcher then runs each write
 * alone).
 */
export async function applyStatusWrites(tx: Tx, ctx: InstanceContext, writes: readonly StatusWrite[]): Promise<StatusWriteResult[]> {
  const outcomes = writes.flatMap((w) => (w.kind === 'submit' ? [w.outcome] : []));
  const receipts = writes.flatMap((w) => (w.kind === 'receipt' ? [w.receipt] : []));
  lockKeys(tx, ctx, outcomes, receipts);
  const found = await findParts(tx, receipts);
  const states = new Map((await lockMessages(tx, [...outcomes.map((o) => o.messageId), ...[...found.values()].map((f) => f.message_id)]))
    .map((s) => [s.message.id, s]));
  const parked = await takeParked(tx, keysToMatch(states, outcomes));

  const keyed = new Map<string, KeyedPart>();
  const held = new Map<string, HeldReceipt[]>();
  const toPark: HeldReceipt[] = [];
  const results: StatusWriteResult[] = [];
  let receiptIndex = 0;
  for (const w of writes) {
    if (w.kind === 'submit') {
      await recordOne(tx, ctx, states.get(w.outcome.messageId)!, w.outcome, (state, part, key, now) => {
        keyed.set(receiptKeyId(state.message.upstream, key), { state, part });
        applyKeyed(tx, state, part, key, parked, held, now);
      });
      results.push(undefined);
      continue;
    }
    const receipt = w.receipt;
    const stored = found.get(receiptIndex++);
    if (receipt.keys.length === 0) {
      // No id: nothing could ever unpark it.
      results.push({ kind: 'dropped', reason: 'no_id' });
      continue;
    }
    const match = matchOf(receipt, stored, states, keyed);
    if (match === undefined) {
      const h: HeldReceipt = { receipt, taken: false };
      toPark.push(h);
      for (const key of new Set(receipt.keys)) {
        const id = receiptKeyId(receipt.upstream, key);
        const waiting = held.get(id);
        if (waiting === undefined) held.set(id, [h]);
        else waiting.push(h);
      }
      results.push({ kind: 'parked' });
      continue;
    }
    const { state, part, key } = match;
    const changed = applyToPart(tx, state, part, key, receipt, receiptChangedAt(receipt.receivedAt, part));
    results.push({ kind: 'matched', messageId: state.message.id, part: part.part, key, changed });
  }
  park(tx, toPark.filter((h) => !h.taken).map((h) => h.receipt));
  return results;
}

function lockKeys(tx: Tx, ctx: InstanceContext, outcomes: readonly SubmitOutcome[], receipts: readonly ReceiptRecord[]): void {
  const outcomeKeys = outcomes.flatMap((o) => o.results.flatMap((r) => (r.kind === 'accepted' ? [[o.messageId, r.matchKey] as const] : [])));
  const receiptKeys = receipts.flatMap((r) => r.keys.map((key) => [r.upstream, key] as const));
  if (outcomeKeys.length + receiptKeys.length === 0) return;
  // Sent with findParts: PostgreSQL runs that after the locks are taken, with a snapshot of then.
  tx.send(LOCK_KEYS_SQL, [
    ctx.spaces.receipt, outcomeKeys.map(([id]) => id), outcomeKeys.map(([, key]) => key),
    receiptKeys.map(([upstream]) => upstream), receiptKeys.map(([, key]) => key),
  ]);
}

/**
 * After an outcome gave a part of a locked message its key: the receipts parked under it, those
 * of the parking table first (they came before this transaction), then those of this
 * transaction that came before the outcome, oldest first.
 */
function applyKeyed(tx: Tx, state: MessageState, part: PartStatusRow, key: string, parked: ParkedByKey, held: Map<string, HeldReceipt[]>, now: number): void {
  const id = receiptKeyId(state.message.upstream, key);
  applyParked(tx, state, part, key, parked.take(state.message.upstream, key), now);
  for (const h of held.get(id) ?? []) {
    if (h.taken) continue;
    h.taken = true;
    applyToPart(tx, state, part, key, h.receipt, unparkedChangedAt(h.receipt.receivedAt, now));
  }
  held.delete(id);
}

/**
 * The part a receipt finds at its turn: the first of its keys that a part has, on its upstream;
 * the latest message's when two parts have that key (an SMSC reused an id). `stored` is what the
 * table had when the transaction began (the first key with a part there); `keyed` what outcomes
 * earlier in this transaction gave.
 */
function matchOf(
  receipt: ReceiptRecord, stored: FoundPart | undefined, states: ReadonlyMap<string, MessageState>, keyed: ReadonlyMap<string, KeyedPart>,
): { state: MessageState; part: PartStatusRow; key: string } | undefined {
  const keys = [...new Set(receipt.keys)];
  const storedState = stored && states.get(stored.message_id);
  const storedPart = storedState?.parts.find((p) => p.part === stored?.part);
  const storedOrd = storedPart === undefined ? keys.length : stored!.ord;
  for (let ord = 0; ord <= Math.min(storedOrd, keys.length - 1); ord++) {
    const fresh = keyed.get(receiptKeyId(receipt.upstream, keys[ord]!));
    if (fresh === undefined) continue;
    if (ord < storedOrd || isLater(fresh.part, storedPart!)) return { ...fresh, key: keys[ord]! };
    break;
  }
  return storedPart === undefined ? undefined : { state: storedState!, part: storedPart, key: stored!.key };
}

function isLater(a: PartStatusRow, b: PartStatusRow): boolean {
  return a.message_seq > b.message_seq || (a.message_seq === b.message_seq && a.part > b.part);
}
