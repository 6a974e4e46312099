/**
 * The store's role for taking messages in (the dispatch layer's `Acceptor`): messages stored with
 * their batch and schedule in one commit, and the depth of the queue its admission reads. The
 * contract every role shares (commits, times) is in `store.ts`.
 */

import type { Recurrence } from '../core/recurrence.js';
import type { RegulatoryIds, VendorTlv } from '../sms/regulatory.js';
import type { NewIdempotencyKey } from './idempotency.js';

/** One submit_sm body as composed at accept time (the concatenation reference is fixed then). */
export interface StoredPartBody {
  dataCoding: number;
  esmClass: number;
  shortMessage: Buffer;
  /** SAR TLVs when the upstream splits by SAR. */
  sar?: { refNum: number; total: number; seq: number };
  messagePayload?: Buffer;
}

/** What every submit_sm of a message carries besides its body: fixed when the message is accepted. */
export interface SubmitAddressing {
  source: string;
  destination: string;
  registeredDelivery: number;
  sourceTon: number;
  sourceNpi: number;
  destTon: number;
  destNpi: number;
  /** SMPP validity_period string ('' = SMSC default). */
  validityPeriod: string;
  /** Vendor-specific TLVs on every part: the regulatory ids in its upstream's tags. Absent or empty: none. */
  vendorTlvs?: VendorTlv[];
}

export interface NewMessage extends SubmitAddressing {
  /** Assigned by the caller (ingress): the id answered to the client. */
  id: string;
  client: string;
  /**
   * Whether its status changes become outbox events (SUBMITTED at accept, then every change):
   * true when its client had somewhere to receive them (a webhook) when it was accepted.
   */
  events: boolean;
  /** The upstream its parts are composed for and go through (another of its route's after a failover). */
  upstream: string;
  /** The name of the route it was accepted on (null: none, as for messages stored before routes). */
  route: string | null;
  text: string;
  /** As the client asked: TEXT or UNICODE. */
  messageType: 'TEXT' | 'UNICODE';
  /** As encoded: GSM-7 or UNICODE. */
  encoding: 'GSM-7' | 'UNICODE';
  campaignName: string | null;
  /** Not sent after this instant (expiryHour); null = no limit. */
  expiresAt: number | null;
  /** Not sent before this instant (a schedule); null = at once. */
  notBefore: number | null;
  /** The registry ids the send gave, kept to compose it again for another upstream (failover). Absent: none. */
  regulatory?: RegulatoryIds;
  parts: StoredPartBody[];
}

export interface NewBatch {
  client: string;
  senderId: string;
  /** 'single' for sendSms, 'bulk' for sendbulk (the list's reqType). */
  reqType: string;
  messageType: string;
  campaignName: string | null;
  /**
   * Milliseconds between the releases of its messages (sendbulk's `delay`): each waits for its
   * turn, one at a time, in order (`batch-turns.ts`). Absent or null: all go as soon as they may.
   */
  spacingMs?: number | null;
}

export interface NewSchedule {
  client: string;
  /** When the schedule releases its messages. */
  runAt: number;
  /** The repeat as the API normalised it (stored with the schedule); null: none. */
  repeat: string | null;
  /** The series when the schedule repeats (`repeat`): its first run is `runAt`. */
  recurrence?: Recurrence;
}

export interface AcceptRequest {
  messages: NewMessage[];
  /** Creates a batch and puts every message in it. */
  batch?: NewBatch;
  /** Or appends the messages to a batch made by an earlier call (a bulk upload in chunks); its total grows. */
  batchId?: number;
  /** Creates a schedule for the new batch (requires `batch`); its messages, and those appended later, wait until it is released. */
  schedule?: NewSchedule;
  /**
   * The messages go to the pool as soon as this commit is done (the dispatcher has room and
   * nothing older waits): their parts are stored inflight under this instance's claim, as a
   * claim in the same commit would leave them, and no claim returns them. Only for a request
   * without a batch or a schedule, and only where the store says `claimsOnAccept`; the store may
   * still queue them (`Accepted.claimed` says which).
   */
  claimed?: boolean;
  /**
   * Recorded in the same commit (`IdempotencyKeys`): done with the request's one message as its
   * result, or pending (a first chunk of a bulk upload, with `batch`). Refused with
   * IDEMPOTENCY_KEY_IN_USE, and nothing stored, when the key is recorded and not expired.
   */
  idempotencyKey?: NewIdempotencyKey;
  now: number;
}

export interface Accepted {
  batchId: number | null;
  scheduleId: number | null;
  /**
   * True when the messages were stored inflight under this instance's claim (a `claimed` request
   * that the store honoured): the caller hands them to the pool. Otherwise they are queued.
   */
  claimed?: boolean;
}

/** Queued parts (`MessageIntake.queueDepth`): in all, and of each client that has any. */
export interface QueueDepth {
  queued: number;
  /** Clients with queued parts, each once; their `queued` adds up to the total. */
  byClient: Array<{ client: string; queued: number }>;
}

export interface MessageIntake {
  /**
   * Creates messages (status SUBMITTED, parts queued, or inflight when the request is
   * `claimed` and the store `claimsOnAccept`), with their batch and schedule, in one commit.
   */
  accept(request: AcceptRequest): Promise<Accepted>;

  /**
   * Whether `accept` honours `claimed`. A claim is a statement and a write of every part it
   * takes, a quarter of a shared store's work per message when the queue is empty and every
   * message is claimed right after its accept; the SQLite store claims in its own process and
   * does without.
   */
  readonly claimsOnAccept?: boolean;

  /**
   * Queued parts (held ones included: a paused batch, a schedule not yet released), in all and
   * per client: the figures the 429 decisions read often, in one walk of the queued parts
   * (`StatusReads.counts` also counts the outbox).
   */
  queueDepth(): Promise<QueueDepth>;
}
