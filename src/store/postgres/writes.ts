/**
 * The writes of a transaction's status changes, gathered and sent as one statement. A status
 * change works on locked rows in memory (`part-status.ts`) and says which rows it changed, which
 * receipts, events and parked receipts it adds or removes; the transaction (`db.ts`) sends them
 * all before its next statement and before COMMIT. One round trip instead of one per row: a
 * submit outcome with its event is one statement, and so is expiring a thousand messages.
 *
 * Each changed row is written once, with its values at the time of the flush. Batch counters go
 * in the last flush only, just before COMMIT, in batch id order: the batch row is a counter that
 * every message of a bulk batch moves, and its lock is held from there to the COMMIT.
 */
import type { StatusEventPayload } from '../event-payloads.js';
import type { ReceiptInsert } from '../rules/receipts.js';
import type { MessageStatusRow, PartStatusRow } from './rows.js';
import { plannedEachRun } from './statements.js';

interface EventInsert {
  route: { client: string; upstream: string };
  payload: StatusEventPayload;
  at: number;
}

// Planned each run (`plannedEachRun`): with the batch's arrays known, the planner joins them to
// the tables by their keys' indexes. (A generic plan needed each key repeated as `= ANY(...)` to
// find that index, and then searched the whole array again for each row joined: 350 ms for a
// flush of 500 parts, where the join by key takes 5.)
// A status event waits ('blocked') while its message has an earlier event still to deliver, in
// the database or earlier in this flush; its writer holds the message's lock, so no other
// instance adds or promotes one meanwhile. That lookup is a scalar subquery, one probe of
// outbox_live per event: an EXISTS there may be planned as one hash of every undelivered event,
// which the planner chose whenever the outbox's statistics were older than its rows (a flush of
// 200 events read 23,000 outbox rows, 15 of its 21 ms; a receiver down for a day means millions).
export const FLUSH_SQL = plannedEachRun(`WITH
  wp AS (
    UPDATE parts p SET state = u.state, status = u.status, reason = u.reason, smsc_id = u.smsc_id, match_key = u.match_key, bind = u.bind,
      attempts = u.attempts, not_before = u.not_before, updated_at = u.updated_at, claimed_by = u.claimed_by, lease_until = u.lease_until,
      -- The write that gives a part its SMSC id is its submit_sm_resp's: its time is when the part was sent.
      sent_at = CASE WHEN p.smsc_id IS NULL AND u.smsc_id IS NOT NULL THEN u.updated_at ELSE p.sent_at END
    FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::bigint[],
      $11::bigint[], $12::text[], $13::bigint[])
      AS u(message_id, part, state, status, reason, smsc_id, match_key, bind, attempts, not_before, updated_at, claimed_by, lease_until)
    WHERE p.message_id = u.message_id AND p.part = u.part
    RETURNING 1),
  wm AS (
    UPDATE messages m SET status = u.status, reason = u.reason, processed = u.processed, updated_at = u.updated_at
    FROM unnest($14::text[], $15::text[], $16::text[], $17::smallint[], $18::bigint[]) AS u(id, status, reason, processed, updated_at)
    WHERE m.id = u.id
    RETURNING 1),
  wr AS (
    INSERT INTO receipts (message_id, part, upstream, key, status, reason, changed, ignored, raw, received_at)
    SELECT u.message_id, u.part, u.upstream, u.key, u.status, u.reason, u.changed, u.ignored, u.raw, u.received_at
    FROM unnest($19::text[], $20::int[], $21::text[], $22::text[], $23::text[], $24::text[], $25::smallint[], $26::text[], $27::text[], $28::bigint[])
      WITH ORDINALITY AS u(message_id, part, upstream, key, status, reason, changed, ignored, raw, received_at, n)
    ORDER BY u.n
    RETURNING 1),
  wo AS (
    INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
    SELECT 'status', u.message_id, u.client, u.upstream, u.payload, u.at, u.at, u.at,
      CASE WHEN row_number() OVER (PARTITION BY u.message_id ORDER BY u.n) > 1
        OR (SELECT 1 FROM outbox e WHERE e.message_id = u.message_id AND e.state IN ('pending', 'blocked') LIMIT 1) IS NOT NULL
      THEN 'blocked' ELSE 'pending' END
    FROM unnest($29::text[], $30::text[], $31::text[], $32::text[], $33::bigint[]) WITH ORDINALITY AS u(message_id, client, upstream, payload, at, n)
    ORDER BY u.n
    RETURNING 1),
  wk AS (
    DELETE FROM parked_receipts WHERE id = ANY($34::bigint[])
    RETURNING 1),
  wb AS (
    UPDATE batches b SET processed = b.processed + u.n, updated_at = $37
    FROM unnest($35::bigint[], $36::int[]) AS u(id, n)
    WHERE b.id = u.id
    RETURNING 1)
  SELECT (SELECT count(*) FROM wp) + (SELECT count(*) FROM wm) + (SELECT count(*) FROM wr) + (SELECT count(*) FROM wo)
    + (SELECT count(*) FROM wk) + (SELECT count(*) FROM wb) AS n`);

export class PendingWrites {
  readonly #parts = new Map<string, PartStatusRow>();
  readonly #messages = new Map<string, MessageStatusRow>();
  #receipts: ReceiptInsert[] = [];
  #events: EventInsert[] = [];
  #unparked: number[] = [];
  readonly #processed = new Map<number, number>();
  #processedAt = 0;

  /** The part (an object of a locked message's state) has changed: written with its values at the flush. */
  part(p: PartStatusRow): void {
    this.#parts.set(`${p.message_id}\u0000${p.part}`, p);
  }

  message(m: MessageStatusRow): void {
    this.#messages.set(m.id, m);
  }

  receipt(r: ReceiptInsert): void {
    this.#receipts.push(r);
  }

  statusEvent(route: { client: string; upstream: string }, payload: StatusEventPayload, at: number): void {
    this.#events.push({ route, payload, at });
  }

  unpark(parkedIds: readonly number[]): void {
    this.#unparked.push(...parkedIds);
  }

  /** One more processed message in the batch. */
  countProcessed(batchId: number, now: number): void {
    this.#processed.set(batchId, (this.#processed.get(batchId) ?? 0) + 1);
    this.#processedAt = Math.max(this.#processedAt, now);
  }

  /** Whether a flush has anything to send; `final` counts the batch counters too. */
  pending(final: boolean): boolean {
    return this.#parts.size + this.#messages.size + this.#receipts.length + this.#events.length + this.#unparked.length > 0
      || (final && this.#processed.size > 0);
  }

  /** The parameters of FLUSH_SQL for what is gathered, and forgets it. */
  take(final: boolean): unknown[] {
    const parts = [...this.#parts.values()];
    const messages = [...this.#messages.values()];
    const receipts = this.#receipts;
    const events = this.#events;
    const batches = final ? [...this.#processed.keys()].sort((a, b) => a - b) : [];
    const params = [
      parts.map((p) => p.message_id), parts.map((p) => p.part), parts.map((p) => p.state), parts.map((p) => p.status),
      parts.map((p) => p.reason), parts.map((p) => p.smsc_id), parts.map((p) => p.match_key), parts.map((p) => p.bind),
      parts.map((p) => p.attempts), parts.map((p) => p.not_before), parts.map((p) => p.updated_at), parts.map((p) => p.claimed_by),
      parts.map((p) => p.lease_until),
      messages.map((m) => m.id), messages.map((m) => m.status), messages.map((m) => m.reason), messages.map((m) => m.processed),
      messages.map((m) => m.updated_at),
      receipts.map((r) => r.message_id), receipts.map((r) => r.part), receipts.map((r) => r.upstream), receipts.map((r) => r.key),
      receipts.map((r) => r.status), receipts.map((r) => r.reason), receipts.map((r) => r.changed), receipts.map((r) => r.ignored),
      receipts.map((r) => r.raw), receipts.map((r) => r.received_at),
      events.map((e) => e.payload.messageId), events.map((e) => e.route.client), events.map((e) => e.route.upstream),
      events.map((e) => JSON.stringify(e.payload)), events.map((e) => e.at),
      this.#unparked,
      batches, batches.map((id) => this.#processed.get(id) ?? 0), this.#processedAt,
    ];
    this.#parts.clear();
    this.#messages.clear();
    this.#receipts = [];
    this.#events = [];
    this.#unparked = [];
    if (final) this.#processed.clear();
    return params;
  }
}
