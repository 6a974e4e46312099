/**
 * Accepting work from an ingress (HTTP now, AMQP later): a validated send request becomes stored
 * messages whose parts are composed for their upstream, committed before the caller answers. The
 * parts are composed here, once, so a resend after a restart carries the same concatenation
 * reference as the first try.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { uuidV7 } from '../core/ids.js';
import type { Accepted, ClaimedMessage, Store, NewMessage, StoredPartBody } from '../store/store.js';
import { MAX_VALIDITY_HOURS } from '../sms/smpp-time.js';
import { MessageComposer, type ComposedMessage, type ComposeSettings } from './compose.js';
import type { Admission } from './dispatcher.js';

/** What every send names, single or bulk (the provider's sendSms / bulkRequest fields). */
export interface SendCommon {
  client: string;
  senderId: string;
  message: string;
  messageType: 'TEXT' | 'UNICODE';
  /** Validity in whole hours (1 … MAX_VALIDITY_HOURS). */
  expiryHour?: number;
  campaignName?: string;
  /** Scheduled sends wait for this instant (wall ms) or for send-now. */
  schedule?: { runAt: number; repeat: string | null };
}

export interface SendRequest extends SendCommon {
  destination: string;
}

export interface AcceptorUpstream {
  name: string;
  compose: ComposeSettings;
}

export interface AcceptorOptions {
  store: Store;
  /** The first is where sends go (per-client routing can choose another later). */
  upstreams: AcceptorUpstream[];
  clock: Clock;
  /** Queued parts above which sends are refused with QUEUE_FULL (429). */
  maxQueued: number;
  /** Message ids; time-ordered UUIDs (version 7) by default. */
  newId?: () => string;
  /** Called after each commit of new work the dispatcher has to claim (its wake-up). */
  onAccepted?: () => void;
  /**
   * The dispatcher's `admit`: a single send goes to the pool straight from its accept when the
   * dispatcher has room and the store `claimsOnAccept`. Default: every message is queued.
   */
  admit?: (upstream: string) => Admission;
  /** Whether a client's messages produce status events (it has a webhook). Default: none do. */
  wantsEvents?: (client: string) => boolean;
}

/**
 * How often the queue depth is read from the store for the 429 decision: every 250 ms once the
 * last reading is at half the limit or more, every second below that. Counting the queued parts
 * costs the store a walk of them (with 45,000 queued, a fifth of a core of PostgreSQL at four
 * counts a second per instance); far below the limit a reading a second old decides the same.
 */
export const DEPTH_REFRESH_MS = 250;
export const DEPTH_REFRESH_FAR_MS = 1_000;

export class Acceptor {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #maxQueued: number;
  readonly #newId: () => string;
  readonly #upstream: string;
  readonly #composer: MessageComposer;
  readonly #onAccepted: () => void;
  readonly #wantsEvents: (client: string) => boolean;
  readonly #admit: ((upstream: string) => Admission) | undefined;
  #depth = { value: 0, readAt: -Infinity };
  /** The reading under way: every request that finds the last one too old waits for this one. */
  #depthReading: Promise<void> | null = null;

  constructor(o: AcceptorOptions) {
    const first = o.upstreams[0];
    if (!first) throw new SmppdError(ErrorCode.INTERNAL, 'an Acceptor needs at least one upstream');
    this.#store = o.store;
    this.#clock = o.clock;
    this.#maxQueued = o.maxQueued;
    this.#newId = o.newId ?? (() => uuidV7(this.#clock.wallNow()));
    this.#upstream = first.name;
    this.#composer = new MessageComposer(first.compose);
    this.#onAccepted = o.onAccepted ?? (() => {});
    this.#wantsEvents = o.wantsEvents ?? (() => false);
    this.#admit = o.store.claimsOnAccept === true ? o.admit : undefined;
  }

  /** Throws QUEUE_FULL when the store holds more queued parts than allowed; callers answer 429. */
  async checkCapacity(): Promise<void> {
    const now = this.#clock.now();
    const refreshMs = this.#depth.value * 2 >= this.#maxQueued ? DEPTH_REFRESH_MS : DEPTH_REFRESH_FAR_MS;
    if (now - this.#depth.readAt >= refreshMs) await this.#readDepth(now);
    if (this.#depth.value >= this.#maxQueued) {
      throw new SmppdError(ErrorCode.QUEUE_FULL, `the queue holds ${this.#depth.value} parts (limit ${this.#maxQueued}); retry later`, { retryAfterSeconds: 1 });
    }
  }

  /**
   * One count at a time: under load hundreds of requests find the reading too old in the same
   * few milliseconds (a RabbitMQ prefetch, a burst of sendSms), and each asking for its own count
   * made 78 counts a second of the queued parts, the PostgreSQL store's most expensive statement.
   */
  #readDepth(now: number): Promise<void> {
    this.#depthReading ??= this.#store.queueDepth()
      .then((d) => { this.#depth = { value: d.queued, readAt: now }; })
      .finally(() => { this.#depthReading = null; });
    return this.#depthReading;
  }

  /** One message; resolves after the commit with the id to answer. Throws SmppdError on refusal. */
  async send(req: SendRequest): Promise<{ messageId: string; batchId: number | null }> {
    await this.checkCapacity();
    const message = this.#message(req, req.destination);
    const now = this.#clock.wallNow();
    if (req.schedule === undefined) {
      await this.#acceptLoose(message, now);
      return { messageId: message.id, batchId: null };
    }
    const accepted = await this.#store.accept({
      messages: [message],
      now,
      batch: this.#batch(req, 'single', message),
      schedule: { client: req.client, runAt: req.schedule.runAt, repeat: req.schedule.repeat },
    });
    this.#onAccepted();
    return { messageId: message.id, batchId: accepted.batchId };
  }

  /** A message without a batch or a schedule: claimed at its accept and handed over when the dispatcher admits it, else queued. */
  async #acceptLoose(message: NewMessage, now: number): Promise<void> {
    const admission = this.#admit?.(message.upstream);
    let accepted: Accepted;
    try {
      accepted = await this.#store.accept({ messages: [message], now, ...(admission?.direct === true ? { claimed: true } : {}) });
    } catch (e) {
      admission?.done();
      throw e;
    }
    // The store may have queued it after all (`Accepted.claimed`).
    if (admission?.direct === true && accepted.claimed === true) {
      admission.handOver(claimedOf(message));
      return;
    }
    admission?.done();
    this.#onAccepted();
  }

  /**
   * A bulk job: the text is composed once and checked before any number is stored; numbers are
   * then added in chunks (`add`), each committed before `add` resolves. The batch exists from
   * the first chunk on; the caller answers after `finish`. A text of one part is the same bytes
   * for every number and is not composed again; a longer one is, for its own concatenation
   * reference (two long messages to one number must not share one).
   */
  async startBulk(common: SendCommon): Promise<BulkWriter> {
    await this.checkCapacity();
    const probe = this.#compose(common);
    const make = probe.parts.length === 1
      ? (destination: string) => this.#messageOf(common, destination, probe)
      : (destination: string) => this.#message(common, destination);
    return new BulkWriter(this.#store, this.#clock, make, this.#batch(common, 'bulk', this.#messageOf(common, '0', probe)), common, this.#onAccepted);
  }

  #message(req: SendCommon, destination: string): NewMessage {
    return this.#messageOf(req, destination, this.#compose(req));
  }

  /** The parts of `req`'s text for its upstream; throws VALIDATION and the compose errors. */
  #compose(req: SendCommon): ComposedMessage {
    const hours = req.expiryHour;
    if (hours !== undefined && (!Number.isInteger(hours) || hours < 1 || hours > MAX_VALIDITY_HOURS)) {
      throw new SmppdError(ErrorCode.VALIDATION, `expiryHour must be a whole number from 1 to ${MAX_VALIDITY_HOURS}`);
    }
    // The destination is not part of what is composed: the message carries its own.
    return this.#composer.compose({
      source: req.senderId, destination: '', text: req.message, messageType: req.messageType,
      ...(hours !== undefined ? { validityHours: hours } : {}),
    });
  }

  #messageOf(req: SendCommon, destination: string, composed: ComposedMessage): NewMessage {
    const hours = req.expiryHour;
    const first = composed.parts[0]!;
    const now = this.#clock.wallNow();
    return {
      id: this.#newId(),
      client: req.client,
      events: this.#wantsEvents(req.client),
      upstream: this.#upstream,
      source: req.senderId,
      destination,
      text: req.message,
      messageType: req.messageType,
      encoding: composed.encoding,
      campaignName: req.campaignName ?? null,
      registeredDelivery: first.registeredDelivery,
      sourceTon: first.sourceAddrTon,
      sourceNpi: first.sourceAddrNpi,
      destTon: first.destAddrTon,
      destNpi: first.destAddrNpi,
      validityPeriod: first.validityPeriod,
      expiresAt: hours === undefined ? null : (req.schedule?.runAt ?? now) + hours * 3_600_000,
      notBefore: null,
      parts: composed.parts.map((p): StoredPartBody => ({
        dataCoding: p.dataCoding,
        esmClass: p.esmClass,
        shortMessage: p.shortMessage,
        ...(p.tlvs?.sarMsgRefNum !== undefined ? { sar: { refNum: p.tlvs.sarMsgRefNum, total: p.tlvs.sarTotalSegments ?? 0, seq: p.tlvs.sarSegmentSeqnum ?? 0 } } : {}),
        ...(p.tlvs?.messagePayload ? { messagePayload: p.tlvs.messagePayload } : {}),
      })),
    };
  }

  #batch(req: SendCommon, reqType: string, sample: NewMessage) {
    return { client: req.client, senderId: req.senderId, reqType, messageType: sample.encoding, campaignName: req.campaignName ?? null };
  }
}

/** A message as a claim would return it right after its accept: every part, none tried yet. */
export function claimedOf(m: NewMessage): ClaimedMessage {
  return {
    id: m.id, client: m.client, upstream: m.upstream, source: m.source, destination: m.destination, registeredDelivery: m.registeredDelivery,
    sourceTon: m.sourceTon, sourceNpi: m.sourceNpi, destTon: m.destTon, destNpi: m.destNpi, validityPeriod: m.validityPeriod,
    parts: m.parts.map((p, i) => ({ ...p, part: i + 1, attempts: 0 })),
  };
}

/** Adds the numbers of one bulk job in committed chunks. */
export class BulkWriter {
  #batchId: number | null = null;
  #scheduleId: number | null = null;
  #count = 0;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly make: (destination: string) => NewMessage,
    private readonly batch: { client: string; senderId: string; reqType: string; messageType: string; campaignName: string | null },
    private readonly common: SendCommon,
    private readonly onAccepted: () => void,
  ) {}

  get batchId(): number | null {
    return this.#batchId;
  }

  get scheduleId(): number | null {
    return this.#scheduleId;
  }

  get count(): number {
    return this.#count;
  }

  /** Stores one chunk of valid, already de-duplicated numbers. */
  async add(destinations: readonly string[]): Promise<void> {
    if (destinations.length === 0 && this.#batchId !== null) return;
    const messages = destinations.map((d) => this.make(d));
    const now = this.clock.wallNow();
    if (this.#batchId === null) {
      const s = this.common.schedule;
      const accepted = await this.store.accept({
        messages, now, batch: this.batch,
        ...(s ? { schedule: { client: this.common.client, runAt: s.runAt, repeat: s.repeat } } : {}),
      });
      this.#batchId = accepted.batchId;
      this.#scheduleId = accepted.scheduleId;
    } else {
      await this.store.accept({ messages, now, batchId: this.#batchId });
    }
    this.#count += messages.length;
    this.onAccepted();
  }
}
