/**
 * The store's role for the dispatcher: claiming the parts that may go now, recording what became
 * of their submits, and the changes time makes to the queue (schedules released, validity
 * expired, inflight parts of a crash or of a gone instance recovered). The contract every role
 * shares (commits, times) is in `store.ts`.
 */
import type { StoredPartBody, SubmitAddressing } from './intake.js';

/** queued: waits for the dispatcher; inflight: handed to the pool; done: has a final submit outcome. */
export type PartState = 'queued' | 'inflight' | 'done';

/** A message the dispatcher hands to the pool: its parts still to send, in order. */
export interface ClaimedMessage extends SubmitAddressing {
  id: string;
  /** The client that sent it: fair sharing counts what each client got. */
  client: string;
  upstream: string;
  /** Parts not yet accepted, in order; `part` is 1-based. */
  parts: Array<StoredPartBody & { part: number; attempts: number }>;
}

/** What `releaseTurns` did: messages released, and when the next turn is due. */
export interface TurnsReleased {
  released: number;
  nextAt: number | null;
}

/** The outcome of one part's submit, as the dispatcher decided it from the pool's outcome. */
export type PartResult =
  | { part: number; kind: 'accepted'; smscId: string; matchKey: string; bind: string; attempts: number }
  /** A final failure before any receipt: REJECTED or FAILED with a reason. */
  | { part: number; kind: 'final'; status: 'REJECTED' | 'FAILED'; reason: string; attempts: number }
  /**
   * Back to the queue (the pool stopped before sending it, or without its outcome), eligible again
   * at `notBefore`. `attempts`: the submits made so far (an uncertain one counts), kept with the
   * part for its next claim, on this upstream or, after a failover, another; absent: unchanged.
   */
  | { part: number; kind: 'requeue'; notBefore: number; attempts?: number };

/**
 * How many ready messages a claim takes of each client (`SubmitClaims.claim`): the dispatcher's
 * fair share between clients decides the numbers, the store takes each client's oldest. A client
 * with fewer ready messages than its number leaves the rest untaken.
 *
 * With `max`, the claim walks the clients not listed first, in name order (`others` each: the
 * dispatcher's probes of clients it does not know to be busy), then the listed ones in list
 * order, and stops once it has `max`: what the probes find is cut from the listed shares, the
 * last listed first, so the claim never takes more than the room it was asked for.
 */
export interface ClaimShares {
  /** At most `limit` (≥ 0) of each listed client's messages; client names unique. */
  clients: ReadonlyArray<{ client: string; limit: number }>;
  /** At most this many (≥ 0) of each client not listed that has ready messages. */
  others: number;
  /** At most this many messages (≥ 0) in all. Absent: no cap but the shares'. */
  max?: number;
}

export interface SubmitClaims {
  /**
   * Messages of `upstream` with a queued part that may go now: batch active (or none), schedule
   * released (or none), `notBefore` passed; of each client its oldest, as many as `take` says
   * (a number n: at most n of each client, the same as `{ clients: [], others: n }`). Their parts
   * become inflight in the same commit, so a restart knows what was handed to the pool. Each
   * client's messages oldest first; the clients' interleaved by age. The cost grows with what
   * is taken and with the number of clients that have queued parts, not with the queue.
   */
  claim(upstream: string, now: number, take: number | ClaimShares): Promise<ClaimedMessage[]>;

  /**
   * Whether `MessageIntake.accept` may store a message inflight under this instance's claim: then
   * no claim returns it, and the dispatcher hands it to the pool itself.
   */
  readonly claimsOnAccept?: boolean;

  /**
   * Records the submit outcomes of a claimed message's parts: accepted parts become SENT with
   * their SMSC id and match key (and any parked receipt for that key is applied in the same
   * commit); final ones become REJECTED/FAILED; requeued ones go back to queued. The message's
   * status is the aggregate of its parts. Each status change adds an outbox event.
   */
  recordSubmit(messageId: string, results: PartResult[], now: number): Promise<void>;

  /**
   * At start: parts left inflight by a crash. `resend`: back to queued (they may have reached
   * the SMSC: a duplicate within the in-flight window); `fail`: FAILED, reason 'uncertain: ...'.
   * The policy is per upstream by name; an upstream missing from `policies` resends. Returns how
   * many parts it touched.
   */
  recoverInflight(policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number>;

  /**
   * While running: parts left inflight by another instance that is gone (its lease over, its
   * connection closed) follow `policies` as `recoverInflight` does. A store used by one process
   * (SQLite) has none and returns 0. Returns how many parts it touched.
   */
  recoverAbandoned(policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number>;

  /**
   * A store that several instances share (PostgreSQL): how long (ms) this instance's claims hold
   * against the others after it is gone (`store.leaseSeconds`). While it runs it renews them
   * (`renewLeases`) and takes over the others' (`recoverAbandoned`) every `leaseUpkeepEveryMs`.
   * Absent: one process uses the store, and nothing is ever abandoned.
   */
  readonly leaseMs?: number;

  /** With `leaseMs`: the instances running on this store now (this one included; at least 1). */
  liveInstances?(): Promise<number>;

  /** With `leaseMs`: extends this instance's inflight leases that end within half a lease to a full one. Returns how many. */
  renewLeases?(now: number): Promise<number>;

  /** Messages past their `expiresAt` with parts never sent become FAILED ('validity expired before submission'). */
  expire(now: number): Promise<number>;

  /**
   * Schedules whose time has come become released, so that a claim takes their messages. Returns
   * how many. Here rather than with the batches and schedules: the dispatcher calls it before it
   * claims, as it calls `expire`.
   */
  releaseDue(now: number): Promise<number>;

  /**
   * Releases the next message of each spaced batch whose turn has come (`NewBatch.spacingMs`).
   * Returns how many it released, and when a turn is due next (null: no spaced batch waits), so
   * the dispatcher wakes then.
   */
  releaseTurns(now: number): Promise<TurnsReleased>;
}
