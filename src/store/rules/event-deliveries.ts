/**
 * The log of a message's delivered events, decided once for both stores. A delivered event leaves
 * the outbox (it holds what is still to deliver, and the dead); what the story of its message
 * tells of it is kept in `event_deliveries`, written in the transaction that deletes it, and
 * deleted by the retention sweep with its message. Events of no message (inbound ones) are not
 * logged: no story tells them.
 */

/** The outbox row of a delivered event, as the delete returns it. */
export interface DeliveredOutboxRow {
  id: number;
  message_id: string | null;
  client: string | null;
  kind: string;
  payload: string;
  attempts: number;
  created_at: number;
  last_error: string | null;
}

/** One row of the log. */
export interface EventDelivery {
  eventId: number;
  messageId: string;
  client: string | null;
  kind: string;
  status: string | null;
  /** Every send, the one that was delivered too. */
  attempts: number;
  createdAt: number;
  deliveredAt: number;
  /** The error of the send before, when one failed. */
  lastError: string | null;
}

export const DELIVERED_RETURNING = 'id, message_id, client, kind, payload, attempts, created_at, last_error';

/** The log's row of a delivered event; undefined for an event of no message. */
export function deliveryOf(r: DeliveredOutboxRow, deliveredAt: number): EventDelivery | undefined {
  if (r.message_id === null) return undefined;
  return {
    eventId: Number(r.id), messageId: r.message_id, client: r.client, kind: r.kind, status: eventStatus(r.payload),
    attempts: r.attempts + 1, createdAt: Number(r.created_at), deliveredAt, lastError: r.last_error,
  };
}

/** The status a status event's payload tells; null for another kind, or a payload that names none. */
export function eventStatus(payload: string): string | null {
  try {
    const status = (JSON.parse(payload) as { status?: unknown }).status;
    return typeof status === 'string' ? status : null;
  } catch {
    return null;
  }
}
