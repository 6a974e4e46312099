/**
 * The one store interface of smppd (DESIGN.md: "Nothing it has answered 200 for may ever be
 * lost"). The SQLite store (`src/store/sqlite/`) is the default; a PostgreSQL store (issue 7)
 * implements the same interface. SQL stays behind it: the other layers see these types only.
 *
 * Every write method resolves only after its transaction is committed (group commit: writes
 * that arrive within a few milliseconds share one transaction). Reads see every write whose
 * promise has resolved. Times are wall-clock milliseconds since the epoch (the caller's
 * `Clock.wallNow()`), never read by the store itself.
 */
import type { ConcatScheme, MoPiece } from '../sms/inbound.js';
import type { DeliveryStatus } from '../sms/status.js';
import type { DecodeProblem, DefaultAlphabet } from '../sms/text-codec.js';

export type BatchState = 'active' | 'paused' | 'aborted';
export type ScheduleState = 'scheduled' | 'released' | 'cancelled';
/** queued: waits for the dispatcher; inflight: handed to the pool; done: has a final submit outcome. */
export type PartState = 'queued' | 'inflight' | 'done';

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
  upstream: string;
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
  parts: StoredPartBody[];
}

export interface NewBatch {
  client: string;
  senderId: string;
  /** 'single' for sendSms, 'bulk' for sendbulk (the list's reqType). */
  reqType: string;
  messageType: string;
  campaignName: string | null;
}

export interface NewSchedule {
  client: string;
  /** When the schedule releases its messages. */
  runAt: number;
  /** The repeat setting as the client sent it (stored, echoed; not interpreted yet). */
  repeat: string | null;
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

export interface Batch {
  id: number;
  client: string;
  senderId: string;
  reqType: string;
  messageType: string;
  campaignName: string | null;
  state: BatchState;
  total: number;
  /** Messages with a final status or a final submit outcome. */
  processed: number;
  pending: number;
  createdAt: number;
  scheduleId: number | null;
}

export interface Schedule {
  id: number;
  client: string;
  batchId: number;
  runAt: number;
  repeat: string | null;
  state: ScheduleState;
  createdAt: number;
}

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
  upstream: string;
  batchId: number | null;
  source: string;
  destination: string;
  status: DeliveryStatus;
  reason: string | null;
  createdAt: number;
  updatedAt: number;
  parts: PartView[];
}

/** A message the dispatcher hands to the pool: its parts still to send, in order. */
export interface ClaimedMessage extends SubmitAddressing {
  id: string;
  /** The client that sent it: fair sharing counts what each client got. */
  client: string;
  upstream: string;
  /** Parts not yet accepted, in order; `part` is 1-based. */
  parts: Array<StoredPartBody & { part: number; attempts: number }>;
}

/** The outcome of one part's submit, as the dispatcher decided it from the pool's outcome. */
export type PartResult =
  | { part: number; kind: 'accepted'; smscId: string; matchKey: string; bind: string; attempts: number }
  /** A final failure before any receipt: REJECTED or FAILED with a reason. */
  | { part: number; kind: 'final'; status: 'REJECTED' | 'FAILED'; reason: string; attempts: number }
  /** Back to the queue (the pool stopped before sending it), eligible again at `notBefore`. */
  | { part: number; kind: 'requeue'; notBefore: number };

/** A receipt, read and matched or to be parked. */
export interface ReceiptRecord {
  upstream: string;
  /** Candidate keys, best first (the domain's `candidateKeys`); empty when the receipt names no id. */
  keys: string[];
  /** The new status it means, or null (unknown stat: stored raw, no change). */
  status: DeliveryStatus | null;
  reason: string | null;
  /** The receipt as read (raw text, fields, warnings) — kept with the part for operators and webhooks. */
  raw: Record<string, unknown>;
  receivedAt: number;
}

export type ReceiptApplied =
  /** Found its part; `changed` false when the merge ignored it (duplicate, regression, after a final). */
  | { kind: 'matched'; messageId: string; part: number; key: string; changed: boolean }
  /** No part has any of its keys yet: parked until one does. */
  | { kind: 'parked' }
  /** It names no id (no keys): no part can ever have it, so it is neither matched nor parked. */
  | { kind: 'dropped'; reason: 'no_id' };

/** How long and how many parked receipts one upstream keeps (`upstreams[].parkedReceipts`). */
export interface ParkingLimit {
  upstream: string;
  /** Wall-clock ms: receipts parked before this are dropped ('age'). */
  before: number;
  /** Receipts kept at most, ≥ 0: the oldest beyond this are dropped ('cap'). */
  max: number;
}

/** Parked receipts `pruneParked` dropped, per upstream and reason; only counts above 0. */
export interface ParkedDropped {
  upstream: string;
  reason: 'age' | 'cap';
  count: number;
}

export interface InboundRecord {
  upstream: string;
  /** The client it is routed to (inboundNumbers, or the upstream's inboundClient); null: none. */
  client: string | null;
  /** Whether it becomes an inbound event for `client` (the client has a webhook). */
  events: boolean;
  source: string;
  destination: string;
  text: string;
  dataCoding: number;
  /** Parts it arrived in. */
  parts: number;
  /** Sequence numbers of parts that never came (it waited `expireInboundParts`' time for them); absent or empty: whole. */
  missingParts?: readonly number[];
  /** What could not be decoded (`DecodeProblem`); absent or empty: every byte decoded cleanly. */
  problems?: readonly DecodeProblem[];
  /** With `problems`: the user data the text was read from, kept as it came. */
  raw?: Buffer;
  receivedAt: number;
}

/**
 * One part of a concatenated MO message (`recordInboundPart`). Upstream, source, destination,
 * reference and part count name the message (TS 23.040 §9.2.3.24.1: the reference is the same in
 * every part from one originator; the count tells apart two messages that reuse a reference).
 */
export interface InboundPartRecord {
  upstream: string;
  /** The route of the message, as `InboundRecord`'s: the last part's is the one stored. */
  client: string | null;
  events: boolean;
  source: string;
  destination: string;
  /** How the parts name their message: part of its key, with `ref` (an 8-bit and a 16-bit reference 7 are two messages). */
  scheme: ConcatScheme;
  ref: number;
  /** Parts of the message, 2..255. */
  total: number;
  piece: MoPiece;
  /** What data_coding 0 means on the upstream: kept with the part, to decode the message once whole. */
  defaultAlphabet: DefaultAlphabet;
  receivedAt: number;
}

export type InboundPartOutcome =
  /** Stored, waiting for the others; `parts` have arrived. */
  | { kind: 'held'; parts: number }
  /**
   * Nothing changed: the part is held already, or repeats (same number, same bytes) a part of a
   * message stored within the wait (an SMSC delivering again after a lost deliver_sm_resp).
   */
  | { kind: 'repeat' }
  /** It was the last one: the message is stored, with its event, in the same commit, and its parts removed. */
  | { kind: 'stored'; inboundId: number; parts: number };

/** A concatenated MO message stored without all its parts by `expireInboundParts`. */
export interface ExpiredInbound {
  upstream: string;
  inboundId: number;
  source: string;
  destination: string;
  parts: number;
  missingParts: number[];
}

/**
 * How many ready messages a claim takes of each client (`Store.claim`): the dispatcher's fair
 * share between clients decides the numbers, the store takes each client's oldest. A client
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

/** Queued parts (`Store.queueDepth`): in all, and of each client that has any. */
export interface QueueDepth {
  queued: number;
  /** Clients with queued parts, each once; their `queued` adds up to the total. */
  byClient: Array<{ client: string; queued: number }>;
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

/** The tables a retention sweep walks (`Store.pruneFinished`), in this order. */
export type PruneTable = 'messages' | 'batches' | 'inbound';

/** Where a retention sweep goes on: returned by `pruneFinished`, handed to the next call as it is. */
export interface PruneCursor {
  /** The table the sweep is on. */
  table: PruneTable;
  /** The last row looked at, in the table's walking order: its time (created_at; inbound: received_at) and id (messages: seq). */
  at: number;
  id: number;
}

/** What one `pruneFinished` call deleted, and where the next call goes on. */
export interface PruneCounts {
  /** Messages, with their parts and receipts. */
  messages: number;
  /** Batches, with their schedules. */
  batches: number;
  inbound: number;
  /** null: every row older than the cutoff has been looked at, the sweep is over. */
  next: PruneCursor | null;
}

/** Pending and dead events of one client. */
export interface OutboxDepth {
  client: string;
  pending: number;
  dead: number;
}

export interface Store {
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
   * Messages of `upstream` with a queued part that may go now: batch active (or none), schedule
   * released (or none), `notBefore` passed; of each client its oldest, as many as `take` says
   * (a number n: at most n of each client, the same as `{ clients: [], others: n }`). Their parts
   * become inflight in the same commit, so a restart knows what was handed to the pool. Each
   * client's messages oldest first; the clients' interleaved by age. The cost grows with what
   * is taken and with the number of clients that have queued parts, not with the queue.
   */
  claim(upstream: string, now: number, take: number | ClaimShares): Promise<ClaimedMessage[]>;

  /**
   * Records the submit outcomes of a claimed message's parts: accepted parts become SENT with
   * their SMSC id and match key (and any parked receipt for that key is applied in the same
   * commit); final ones become REJECTED/FAILED; requeued ones go back to queued. The message's
   * status is the aggregate of its parts. Each status change adds an outbox event.
   */
  recordSubmit(messageId: string, results: PartResult[], now: number): Promise<void>;

  /**
   * Matches a receipt by any of its keys within its upstream, merges its status, or parks it; one
   * with no keys is dropped (`ReceiptApplied`), never parked.
   */
  applyReceipt(receipt: ReceiptRecord): Promise<ReceiptApplied>;

  /**
   * Bounds the parking: receipts of messages this smppd never sent (another system on the same
   * account, or an SMSC sending ids never issued) would otherwise pile up. For each upstream of
   * `limits`: drops the receipts parked before its `before`, then the oldest beyond its `max`
   * (received_at, then id). Receipts of upstreams not in `limits` (renamed or removed, or known
   * only to another instance's configuration) are dropped when parked before `otherBefore`. One
   * commit. Returns what it dropped.
   */
  pruneParked(limits: readonly ParkingLimit[], otherBefore: number): Promise<ParkedDropped[]>;

  /**
   * Retention (`store.retentionDays`): deletes, in one commit, what is older than `before` and
   * finished with —
   * - messages created and last changed before `before`, every part done, no receipt still to come
   *   (a SENT message that asked for one waits for it through its validity, or a week without one:
   *   `rules/retention.ts` receiptNoLongerExpected), no event left in the outbox (pending, blocked or
   *   dead: a dead event keeps its message), with their parts and receipts;
   * - batches created before `before` with no message left and no schedule still scheduled, with their schedules;
   * - inbound messages received before `before` with no event left in the outbox.
   * It walks messages, then batches, then inbound messages in time order from `after` (null or
   * absent: the start of a sweep), and looks at `limit` rows at most (≥ 1), so it deletes at most
   * `limit` messages and takes as long whatever lies behind: rows it must keep are passed once per
   * sweep, not once per call. Call again with `next` until it is null. Outbox rows and parked
   * receipts (`pruneParked`) are never deleted here.
   */
  pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts>;

  /** Stores an inbound (MO) message and its outbox event. */
  recordInbound(inbound: InboundRecord): Promise<void>;

  /**
   * Stores one part of a concatenated MO message, so that it survives a crash before the others
   * come. The part that completes the message has the message assembled (`assembleMo`), stored
   * with its event and its parts removed, in its own commit. What stays of a stored message is a
   * digest of each part until `expireInboundParts(before)` passes its time, so a part delivered
   * again is a `repeat`, not the start of a new message; a part with other bytes under the same
   * key is a new message reusing the reference. Safe when parts of one message arrive at several
   * instances at once (PostgreSQL: they are serialised per message).
   */
  recordInboundPart(part: InboundPartRecord): Promise<InboundPartOutcome>;

  /**
   * Stores as they are, with their events, the concatenated MO messages whose first waiting part
   * arrived before `before` (their missing parts listed), and forgets stored messages older than
   * `before`. At most `limit` messages (≥ 1) per call, oldest first; call again while it returns
   * `limit`.
   */
  expireInboundParts(before: number, limit: number): Promise<ExpiredInbound[]>;

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

  /** Messages past their `expiresAt` with parts never sent become FAILED ('validity expired before submission'). */
  expire(now: number): Promise<number>;

  getMessage(messageId: string): Promise<MessageView | undefined>;

  listBatches(client: string): Promise<Batch[]>;
  getBatch(client: string, batchId: number): Promise<Batch | undefined>;
  /** Returns the batch after the change, or undefined when it does not exist for this client. Aborting fails pending messages. */
  setBatchState(client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined>;

  listSchedules(client: string): Promise<Schedule[]>;
  /** released: its messages go now; cancelled: its pending messages become FAILED ('schedule cancelled'). */
  setScheduleState(client: string, scheduleId: number, state: 'released' | 'cancelled', now: number): Promise<Schedule | undefined>;
  /** Schedules whose time has come become released. Returns how many. */
  releaseDue(now: number): Promise<number>;

  counts(): Promise<StoreCounts>;

  /**
   * Up to `limit` events of `client` that are due and are the oldest undelivered event of their
   * message (so a message's events go out one at a time, in order). They are leased until
   * `leaseUntil`: no claim returns them again before then, unless they are settled. Oldest due first.
   */
  claimEvents(client: string, now: number, limit: number, leaseUntil: number): Promise<OutboxEvent[]>;

  /** Records what became of claimed events, in one commit. */
  settleEvents(outcomes: EventOutcome[], now: number): Promise<SettledEvents>;

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

  /** Pending and dead events per client (metrics). */
  outboxDepth(): Promise<OutboxDepth[]>;

  /**
   * Since when the part that has waited longest among those a claim of `upstream` would take
   * first (each client's oldest ready part: queued, not held, due, not expired) has been ready;
   * null when none is. `now - readySince` is the dispatcher's lag.
   */
  readySince(upstream: string, now: number): Promise<number | null>;

  /**
   * Queued parts (held ones included: a paused batch, a schedule not yet released), in all and
   * per client: the figures the 429 decisions read often, in one walk of the queued parts
   * (counts() also counts the outbox).
   */
  queueDepth(): Promise<QueueDepth>;

  /** Flushes pending writes and closes. */
  close(): Promise<void>;
}
