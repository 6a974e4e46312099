/**
 * The store's role for reading where messages stand: one message with its parts (the status
 * API), and the counts and the dispatcher's lag that metrics and health read. The contract every
 * role shares (commits, times) is in `store.ts`.
 */
import type { DeliveryStatus } from '../sms/status.js';

export interface PartView {
  /** 1-based. */
  part: number;
  status: DeliveryStatus;
  smscMessageId: string | null;
  reason: string | null;
  attempts: number;
  updatedAt: number;
}

export interface MessageView {
  messageId: string;
  client: string;
  /** The upstream it goes (or went) through: the one of its route it was last moved to. */
  upstream: string;
  /** The route it was accepted on; null for messages stored before routes were kept. */
  route: string | null;
  batchId: number | null;
  source: string;
  destination: string;
  status: DeliveryStatus;
  reason: string | null;
  createdAt: number;
  updatedAt: number;
  parts: PartView[];
}

export interface StoreCounts {
  /** Parts by state, for metrics and 429. */
  queued: number;
  inflight: number;
  parked: number;
  /** Outbox events waiting to be delivered (pending, due or backing off). */
  outbox: number;
  /** Outbox events parked as dead. */
  deadEvents: number;
}

export interface StatusReads {
  getMessage(messageId: string): Promise<MessageView | undefined>;

  counts(): Promise<StoreCounts>;

  /**
   * Since when the part that has waited longest among those a claim of `upstream` would take
   * first (each client's oldest ready part: queued, not held, due, not expired) has been ready;
   * null when none is. `now - readySince` is the dispatcher's lag.
   */
  readySince(upstream: string, now: number): Promise<number | null>;

  /** Queued parts (waiting for a claim, held ones included; not inflight) per upstream that has any. */
  queuedByUpstream(): Promise<Array<{ upstream: string; queued: number }>>;
}
