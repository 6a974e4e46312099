/**
 * Outbox rows, written in the same transaction as the change they report (payloads:
 * `../event-payloads.ts`). The status events of a
 * change go with the transaction's other writes (`writes.ts`): pending when they are the only
 * undelivered event of their message, blocked behind the earlier ones otherwise. Their writer
 * holds the message's row lock, as everything that adds, promotes or removes a message's events
 * does (`event-delivery.ts`): two instances never both decide that an event is the head.
 */
import { ErrorCode, SmppdError } from '../../core/errors.js';
import { inboundEvent, type StatusEventPayload } from '../event-payloads.js';
import type { InboundRecord } from '../inbound.js';
import { inboundRow } from '../rows.js';
import type { Tx } from './db.js';

// inbound_id: the retention sweep keeps an inbound message while its event is in the outbox.
const INSERT_INBOUND_SQL = `INSERT INTO outbox (kind, inbound_id, client, upstream, payload, created_at, queued_at, next_attempt_at)
  VALUES ('inbound', $1, $2, $3, $4, $5, $5, $5)`;

// Messages just created: no earlier event, so each SUBMITTED is its message's head (pending).
const INSERT_MANY_SQL = `INSERT INTO outbox (kind, message_id, client, upstream, payload, created_at, queued_at, next_attempt_at, state)
  SELECT 'status', u.message_id, u.client, u.upstream, u.payload, u.at, u.at, u.at, 'pending'
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(at, message_id, client, upstream, payload, n)
  ORDER BY u.n`;

/** The SUBMITTED events of new messages, in one statement, their ids in the order given. */
export function writeNewMessageEvents(
  tx: Tx, events: ReadonlyArray<{ route: { client: string; upstream: string }; payload: StatusEventPayload; at: number }>,
): void {
  if (events.length === 0) return;
  tx.send(INSERT_MANY_SQL, [
    events.map((e) => e.at),
    events.map((e) => e.payload.messageId),
    events.map((e) => e.route.client),
    events.map((e) => e.route.upstream),
    events.map((e) => JSON.stringify(e.payload)),
  ]);
}

/** Stores an inbound message, and its event when it is routed to a client; returns its id. */
export async function recordInbound(tx: Tx, inbound: InboundRecord): Promise<number> {
  const r = inboundRow(inbound);
  const stored = await tx.row<{ id: number }>(
    `INSERT INTO inbound (upstream, client, source, destination, text, data_coding, parts, received_at, missing_parts, problems, raw)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
    [r.upstream, r.client, r.source, r.destination, r.text, r.data_coding, r.parts, r.received_at, r.missing_parts, r.problems, r.raw],
  );
  if (!stored) throw new SmppdError(ErrorCode.INTERNAL, 'INSERT INTO inbound returned no id');
  if (inbound.client === null || !inbound.events) return stored.id;
  const payload = inboundEvent(stored.id, inbound);
  tx.send(INSERT_INBOUND_SQL, [stored.id, inbound.client, inbound.upstream, JSON.stringify(payload), inbound.receivedAt]);
  return stored.id;
}
