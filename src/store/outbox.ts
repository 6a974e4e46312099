/**
 * The store's role for delivering the event outbox (the webhook dispatcher): status and inbound
 * events, written in the commit of the change they tell of, claimed per client under a lease and
 * settled once their receiver answered. What operators and clients ask of the outbox again is
 * `EventResends`. The contract every role shares (commits, times) is in `store.ts`.
 */

/** One outbox event as the webhook dispatcher takes it. */
export interface OutboxEvent {
  /** Increasing with the order the events were written: a message's events in the order of its changes. */
  id: number;
  kind: 'status' | 'inbound';
  messageId: string | null;
  client: string;
  /** The request body, a JSON text (`StatusEventPayload` or `InboundEventPayload`), sent as stored. */
  payload: string;
  createdAt: number;
  /** When it last entered the queue (written, or re-sent after it was dead): the maximum age counts from here. */
  queuedAt: number;
  /** Attempts made so far. */
  attempts: number;
}

/** What became of a claimed event. */
export type EventOutcome =
  /** Acknowledged by the receiver: removed. Dead events of the same message written before it are removed too (superseded). */
  | { id: number; kind: 'delivered' }
  /** Failed; tried again at `at`. */
  | { id: number; kind: 'retry'; at: number; error: string }
  /** Failed, and too old to try again: parked as dead. */
  | { id: number; kind: 'dead'; error: string }
  /** Not attempted (the dispatcher stopped): due again at once, attempts unchanged. */
  | { id: number; kind: 'release' };

export interface SettledEvents {
  /** Dead events removed because a later event of their message was delivered. */
  superseded: number;
}

/** Pending and dead events of one client. */
export interface OutboxDepth {
  client: string;
  pending: number;
  dead: number;
}

export interface EventOutbox {
  /**
   * Up to `limit` events of `client` that are due and are the oldest undelivered event of their
   * message (so a message's events go out one at a time, in order). They are leased until
   * `leaseUntil`: no claim returns them again before then, unless they are settled or (a shared
   * store) taken over from an instance that is gone (`recoverAbandonedEvents`). Oldest due first.
   */
  claimEvents(client: string, now: number, limit: number, leaseUntil: number): Promise<OutboxEvent[]>;

  /** Records what became of claimed events, in one commit. */
  settleEvents(outcomes: EventOutcome[], now: number): Promise<SettledEvents>;

  /** Pending and dead events per client (metrics). */
  outboxDepth(): Promise<OutboxDepth[]>;

  /**
   * A store that several instances share (PostgreSQL): how long (ms) this instance's claimed
   * events stay its own after it is gone, whatever `leaseUntil` it claimed them with
   * (`SubmitClaims.leaseMs`). Absent: one process uses the store.
   */
  readonly leaseMs?: number;

  /** With `leaseMs`: extends this instance's event leases that end within half a lease. Returns how many. */
  renewEventLeases?(now: number): Promise<number>;

  /**
   * With `leaseMs`: the events claimed by instances that are gone (lease over, connection closed)
   * are due again at `now`, for any instance to claim. Returns how many.
   */
  recoverAbandonedEvents?(now: number): Promise<number>;
}
