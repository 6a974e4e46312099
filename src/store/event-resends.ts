/**
 * The store's role for what operators and clients ask of the outbox again (the HTTP API): the
 * dead events listed and re-queued, and status events re-pushed for a range of messages
 * (`POST /sms/resendDlr`). Their delivery is `EventOutbox`'s. The contract every role shares
 * (commits, times) is in `store.ts`.
 */
import type { DeliveryStatus } from '../sms/status.js';

/** A dead event as an operator lists it. */
export interface DeadEvent {
  id: number;
  kind: 'status' | 'inbound';
  messageId: string | null;
  payload: string;
  createdAt: number;
  attempts: number;
  lastError: string | null;
  /** When it was parked. */
  diedAt: number;
}

export interface ResentDeadEvents {
  /** Back in the queue, due now. */
  requeued: number;
  /** Removed instead: a later event of the same message is queued or was delivered, so sending this one would move its status back. */
  superseded: number;
}

/** Which messages `POST /sms/resendDlr` re-pushes: a client's messages created in [from, to). */
export interface ResendFilter {
  client: string;
  /** Inclusive, ms since the epoch. */
  from: number;
  /** Exclusive, ms since the epoch. */
  to: number;
  /** The sender ID (source address) they were sent from. */
  senderId?: string;
  /** Only messages whose current status is this one. */
  status?: DeliveryStatus;
}

export interface EventResends {
  /** A client's dead events, oldest first, after `afterId`. */
  listDeadEvents(client: string, limit: number, afterId?: number): Promise<DeadEvent[]>;

  /**
   * Puts a client's dead events (those of `ids`, or all when `ids` is null) back in the queue,
   * unless a later event of their message is queued or was delivered: those are removed instead.
   */
  resendDeadEvents(client: string, ids: number[] | null, now: number): Promise<ResentDeadEvents>;

  /**
   * `POST /sms/resendDlr`: a new status event with its current status for each message of the
   * filter, taken in message order after `afterSeq`, at most `limit` per call (one commit each).
   * `next` is the cursor for the following call, null when the filter is exhausted.
   */
  resendStatusEvents(filter: ResendFilter, afterSeq: number, limit: number, now: number): Promise<{ queued: number; next: number | null }>;
}
