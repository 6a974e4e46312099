/**
 * Accepting work from an ingress (HTTP now, AMQP later): a validated send request becomes stored
 * messages whose parts are composed for their upstream, committed before the caller answers. The
 * parts are composed here, once, so a resend after a restart carries the same concatenation
 * reference as the first try. Their number is what the caps on queued parts count (`QueueRoom`):
 * room is held for them before they are stored.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { uuidV7 } from '../core/ids.js';
import type { ClaimedMessage } from '../store/claims.js';
import type { Accepted, MessageIntake, NewBatch, NewMessage, StoredPartBody } from '../store/intake.js';
import { MAX_VALIDITY_HOURS } from '../sms/smpp-time.js';
import { MessageComposer, type ComposedMessage, type ComposeSettings } from './compose.js';
import type { Admission } from './dispatcher.js';
import { QueueRoom, type Reservation } from './queue-room.js';

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
  store: MessageIntake;
  /** The first is where sends go (per-client routing can choose another later). */
  upstreams: AcceptorUpstream[];
  clock: Clock;
  /** Queued parts of all clients, at most: a send that would pass it is refused with QUEUE_FULL (429) (`limits.maxQueued`). */
  maxQueued: number;
  /** Each client's own cap on its queued parts (`clients[].maxQueued`); a client not in it has none. `setClientMaxQueued` replaces it. */
  clientMaxQueued?: ReadonlyMap<string, number>;
  /** Parts a second the first upstream sends at most (binds × ratePerBind; 0: no limit), for Retry-After. Default 0. */
  drainPerSecond?: number;
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

export class Acceptor {
  readonly #store: MessageIntake;
  readonly #clock: Clock;
  readonly #room: QueueRoom;
  readonly #newId: () => string;
  readonly #upstream: string;
  readonly #composer: MessageComposer;
  readonly #onAccepted: () => void;
  readonly #wantsEvents: (client: string) => boolean;
  readonly #admit: ((upstream: string) => Admission) | undefined;

  constructor(o: AcceptorOptions) {
    const first = o.upstreams[0];
    if (!first) throw new SmppdError(ErrorCode.INTERNAL, 'an Acceptor needs at least one upstream');
    this.#store = o.store;
    this.#clock = o.clock;
    this.#room = new QueueRoom({
      readDepth: () => o.store.queueDepth(), clock: o.clock, maxQueued: o.maxQueued,
      ...(o.clientMaxQueued ? { clientMaxQueued: o.clientMaxQueued } : {}), ...(o.drainPerSecond !== undefined ? { drainPerSecond: o.drainPerSecond } : {}),
    });
    this.#newId = o.newId ?? (() => uuidV7(this.#clock.wallNow()));
    this.#upstream = first.name;
    this.#composer = new MessageComposer(first.compose);
    this.#onAccepted = o.onAccepted ?? (() => {});
    this.#wantsEvents = o.wantsEvents ?? (() => false);
    this.#admit = o.store.claimsOnAccept === true ? o.admit : undefined;
  }

  /** SIGHUP: each client's cap on its queued parts (`clients[].maxQueued`), from the next request on. */
  setClientMaxQueued(caps: ReadonlyMap<string, number>): void {
    this.#room.setClientMaxQueued(caps);
  }

  /**
   * One message; resolves after the commit with the id to answer. Throws SmppdError on refusal:
   * QUEUE_FULL when its parts would pass a cap on queued parts (`QueueRoom`).
   */
  async send(req: SendRequest): Promise<{ messageId: string; batchId: number | null }> {
    const message = this.#message(req, req.destination);
    const room = await this.#room.reserve(req.client, message.parts.length);
    const now = this.#clock.wallNow();
    try {
      if (req.schedule === undefined) {
        // Handed to the pool from its accept, it was never queued: its room is given back.
        if (!(await this.#acceptLoose(message, now))) room.stored(message.parts.length);
        return { messageId: message.id, batchId: null };
      }
      const accepted = await this.#store.accept({
        messages: [message],
        now,
        batch: this.#batch(req, 'single', message),
        schedule: { client: req.client, runAt: req.schedule.runAt, repeat: req.schedule.repeat },
      });
      room.stored(message.parts.length);
      this.#onAccepted();
      return { messageId: message.id, batchId: accepted.batchId };
    } finally {
      room.release();
    }
  }

  /**
   * A message without a batch or a schedule: claimed at its accept and handed over when the
   * dispatcher admits it (true), else queued (false).
   */
  async #acceptLoose(message: NewMessage, now: number): Promise<boolean> {
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
      return true;
    }
    admission?.done();
    this.#onAccepted();
    return false;
  }

  /**
   * A bulk job: the text is composed once and checked before any number is stored, and the
   * request is refused (QUEUE_FULL) when a cap on queued parts is already reached. Once its
   * numbers are counted, `BulkWriter.reserve` holds room for all their parts or refuses the job
   * whole; they are then added in chunks (`add`), each committed before `add` resolves. The batch
   * exists from the first chunk on. A text of one part is the same bytes for every number and is
   * not composed again; a longer one is, for its own concatenation reference (two long messages
   * to one number must not share one), in as many parts.
   */
  async startBulk(common: SendCommon): Promise<BulkWriter> {
    const probe = this.#compose(common);
    (await this.#room.reserve(common.client, 0)).release();
    const make = probe.parts.length === 1
      ? (destination: string) => this.#messageOf(common, destination, probe)
      : (destination: string) => this.#message(common, destination);
    return new BulkWriter({
      store: this.#store, clock: this.#clock, room: this.#room, make, partsPerMessage: probe.parts.length,
      batch: this.#batch(common, 'bulk', this.#messageOf(common, '0', probe)), common, onAccepted: this.#onAccepted,
    });
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
      route: null,
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

  #batch(req: SendCommon, reqType: string, sample: NewMessage): NewBatch {
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

interface BulkWriterParts {
  store: MessageIntake;
  clock: Clock;
  room: QueueRoom;
  make: (destination: string) => NewMessage;
  /** Parts of each message: the same for every number (the text decides it). */
  partsPerMessage: number;
  batch: NewBatch;
  common: SendCommon;
  onAccepted: () => void;
}

/** Adds the numbers of one bulk job in committed chunks, within the room it reserved for them. */
export class BulkWriter {
  readonly #o: BulkWriterParts;
  #batchId: number | null = null;
  #scheduleId: number | null = null;
  #count = 0;
  #room: Reservation | undefined;
  #reserved = 0;

  constructor(o: BulkWriterParts) {
    this.#o = o;
  }

  get batchId(): number | null {
    return this.#batchId;
  }

  get scheduleId(): number | null {
    return this.#scheduleId;
  }

  get count(): number {
    return this.#count;
  }

  /** Parts each number becomes. */
  get partsPerMessage(): number {
    return this.#o.partsPerMessage;
  }

  /**
   * Holds room for `numbers` messages (their parts) before any is stored, or throws QUEUE_FULL:
   * the job is refused whole. Once only; `add` stores at most that many.
   */
  async reserve(numbers: number): Promise<void> {
    if (this.#room) throw new SmppdError(ErrorCode.INTERNAL, 'a bulk job reserves its room once');
    this.#room = await this.#o.room.reserve(this.#o.common.client, numbers * this.#o.partsPerMessage);
    this.#reserved = numbers;
  }

  /** Stores one chunk of valid, already de-duplicated numbers, within the reserved room. */
  async add(destinations: readonly string[]): Promise<void> {
    const room = this.#room;
    if (!room || this.#count + destinations.length > this.#reserved) {
      throw new SmppdError(ErrorCode.INTERNAL, `a bulk job stores only the numbers it reserved room for (${this.#reserved})`);
    }
    if (destinations.length === 0 && this.#batchId !== null) return;
    const messages = destinations.map((d) => this.#o.make(d));
    const now = this.#o.clock.wallNow();
    if (this.#batchId === null) {
      const s = this.#o.common.schedule;
      const accepted = await this.#o.store.accept({
        messages, now, batch: this.#o.batch,
        ...(s ? { schedule: { client: this.#o.common.client, runAt: s.runAt, repeat: s.repeat } } : {}),
      });
      this.#batchId = accepted.batchId;
      this.#scheduleId = accepted.scheduleId;
    } else {
      await this.#o.store.accept({ messages, now, batchId: this.#batchId });
    }
    room.stored(messages.length * this.#o.partsPerMessage);
    this.#count += messages.length;
    this.#o.onAccepted();
  }

  /** Gives back the room of numbers not stored (the job failed or stored fewer). Call once the job is over, whatever its end. */
  close(): void {
    this.#room?.release();
  }
}
