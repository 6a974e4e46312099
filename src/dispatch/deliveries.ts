/**
 * What the SMSC sends us: each deliver_sm or data_sm is a receipt (matched to its part, or
 * parked until its submit_sm_resp is recorded) or an MO message (reassembled, stored). The
 * answer goes back only after the store committed it; when the store fails, the answer is a
 * temporary error so that the SMSC delivers it again instead of it being lost.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { WarningThrottle } from '../core/warning-throttle.js';
import { Status } from '../smpp/command-status.js';
import type { DataSmPdu, DeliverSmPdu } from '../smpp/pdu.js';
import type { InboundMessages } from '../store/inbound.js';
import type { ReceiptMatching } from '../store/receipts.js';
import { assembleMo, frameMo } from '../sms/inbound.js';
import type { DefaultAlphabet } from '../sms/text-codec.js';
import type { InboundRoute } from './inbound-routing.js';
import { UpstreamReceipts, type ReceiptSettings } from './receipts.js';

export interface DeliveryUpstream extends ReceiptSettings {
  name: string;
  defaultAlphabet: DefaultAlphabet;
}

export interface DeliveryCounters {
  /**
   * `no_id`: a receipt that names no message id, answered ESME_ROK and dropped (nothing could ever
   * match it); `error`: the store failed, answered with a temporary error.
   */
  receipt(upstream: string, result: 'matched' | 'parked' | 'ignored' | 'unknown_stat' | 'no_id' | 'error'): void;
  /** `stored`: an MO message stored (whole, or incomplete after its wait); `error`: the store failed on a part, answered with a temporary error. */
  inbound(upstream: string, result: 'stored' | 'error'): void;
}

const noCounters: DeliveryCounters = { receipt: () => {}, inbound: () => {} };

/** Characters of a receipt's text a log line carries at most (message_payload may hold 64 KiB). */
const RAW_IN_LOG = 200;

/**
 * How long an incomplete MO waits for its other parts, in wall time from its first part and across
 * restarts; once it has waited longer it is stored as it is, its missing parts listed. Also how
 * long the parts of a stored message are remembered, so one the SMSC delivers again is no new message.
 */
export const MO_MAX_WAIT_MS = 10 * 60_000;
/** Incomplete messages stored per store call of `flushStaleInbound`. */
const EXPIRE_BATCH = 500;

export class Deliveries {
  readonly #store: ReceiptMatching & InboundMessages;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #counters: DeliveryCounters;
  readonly #warnings: WarningThrottle;
  readonly #parking: { parked(upstream: string): void } | undefined;
  readonly #route: (upstream: string, destination: string) => InboundRoute;
  readonly #upstreams = new Map<string, { receipts: UpstreamReceipts; defaultAlphabet: DefaultAlphabet }>();

  constructor(o: {
    store: ReceiptMatching & InboundMessages; clock: Clock; log: Log; upstreams: DeliveryUpstream[]; counters?: DeliveryCounters;
    /** Which client an MO belongs to (`InboundRouting.route`). Default: none. */
    routeInbound?: (upstream: string, destination: string) => InboundRoute;
    /** Told of each receipt parked, to keep the parking bounded (`ReceiptParking`). Default: none. */
    parking?: { parked(upstream: string): void };
    /** Receipts that cannot be matched and store failures, logged once per kind per upstream per interval; its owner closes it. Default: one at the default interval. */
    warnings?: WarningThrottle;
  }) {
    this.#store = o.store;
    this.#route = o.routeInbound ?? (() => ({ client: null, events: false }));
    this.#clock = o.clock;
    this.#log = o.log;
    this.#counters = o.counters ?? noCounters;
    this.#warnings = o.warnings ?? new WarningThrottle(o.clock);
    this.#parking = o.parking;
    for (const u of o.upstreams) {
      this.#upstreams.set(u.name, { receipts: new UpstreamReceipts(u), defaultAlphabet: u.defaultAlphabet });
    }
  }

  /** The pool's deliver handler: resolves to the command_status of the deliver_sm_resp / data_sm_resp. */
  readonly handle = async (upstream: string, bind: string, pdu: DeliverSmPdu | DataSmPdu): Promise<number> => {
    const u = this.#upstreams.get(upstream);
    if (!u) return Status.RSYSERR;
    const isReceipt = UpstreamReceipts.isReceipt(pdu);
    try {
      if (isReceipt) await this.#receipt(upstream, bind, u.receipts, pdu);
      else await this.#inbound(upstream, bind, u.defaultAlphabet, pdu);
      return Status.ROK;
    } catch (e) {
      if (isReceipt) this.#counters.receipt(upstream, 'error');
      else this.#counters.inbound(upstream, 'error');
      // Once per upstream per interval: a store that is down fails every deliver_sm the SMSC sends (and sends again).
      this.#warnings.error(this.#log, `store_error@${upstream}`, { event: 'store_error', upstream, bind, kind: isReceipt ? 'receipt' : 'inbound', err: e },
        'could not store a deliver_sm; answered with a temporary error so the SMSC sends it again');
      return Status.RX_T_APPN;
    }
  };

  /**
   * Stores, as they are, the concatenated MO messages whose first part came more than
   * `MO_MAX_WAIT_MS` ago (from the store: parts held before a restart count from when they came).
   * Call now and then.
   */
  async flushStaleInbound(): Promise<void> {
    const before = this.#clock.wallNow() - MO_MAX_WAIT_MS;
    // One line per sweep and upstream, however many: an SMSC sending first parts only cannot flood the log.
    const incomplete = new Map<string, number>();
    for (;;) {
      const stored = await this.#store.expireInboundParts(before, EXPIRE_BATCH);
      for (const m of stored) {
        this.#counters.inbound(m.upstream, 'stored');
        incomplete.set(m.upstream, (incomplete.get(m.upstream) ?? 0) + 1);
      }
      if (stored.length < EXPIRE_BATCH) break;
    }
    for (const [upstream, messages] of incomplete) {
      this.#log.warn({ event: 'inbound_incomplete', upstream, messages, waitedMinutes: MO_MAX_WAIT_MS / 60_000 },
        'MO messages stored without the parts that never came (their inbound events list missingParts)');
    }
  }

  async #receipt(upstream: string, bind: string, receipts: UpstreamReceipts, pdu: DeliverSmPdu | DataSmPdu): Promise<void> {
    const read = receipts.read(pdu);
    const { receipt, outcome } = read;
    if (receipt.warnings.length > 0) this.#log.debug({ event: 'receipt_warnings', upstream, bind, warnings: receipt.warnings }, 'receipt read with warnings');
    const applied = await this.#store.applyReceipt({
      upstream,
      keys: read.keys,
      status: outcome.status,
      reason: outcome.status === null ? null : outcome.reason,
      raw: { ...receipt },
      receivedAt: this.#clock.wallNow(),
    });
    switch (applied.kind) {
      case 'matched':
        receipts.found(receipt.id ?? '', [applied.key]);
        this.#counters.receipt(upstream, outcome.status === null ? 'unknown_stat' : applied.changed ? 'matched' : 'ignored');
        return;
      case 'parked':
        this.#counters.receipt(upstream, 'parked');
        this.#parking?.parked(upstream);
        return;
      case 'dropped':
        // Answered ESME_ROK all the same: an error would make the SMSC send it again, forever.
        this.#counters.receipt(upstream, 'no_id');
        this.#warnings.warn(this.#log, `receipt_without_id@${upstream}`, { event: 'receipt_without_id', upstream, bind, stat: receipt.stat, text: receipt.raw.slice(0, RAW_IN_LOG) },
          'receipt names no message id (neither text id: nor receipted_message_id): answered ESME_ROK and dropped');
        return;
    }
  }

  /**
   * A message of one part is stored at once; a part of a longer one is stored with the parts that
   * came before it, and the part that completes it stores the message. Either way the SMSC hears
   * ESME_ROK only after the commit, so a crash loses nothing it was told was taken.
   */
  async #inbound(upstream: string, bind: string, defaultAlphabet: DefaultAlphabet, pdu: DeliverSmPdu | DataSmPdu): Promise<void> {
    const tlvs = pdu.tlvs;
    const sar = tlvs?.sarMsgRefNum !== undefined && tlvs.sarTotalSegments !== undefined && tlvs.sarSegmentSeqnum !== undefined
      ? { refNum: tlvs.sarMsgRefNum, total: tlvs.sarTotalSegments, seq: tlvs.sarSegmentSeqnum }
      : undefined;
    const { piece, concat } = frameMo({
      dataCoding: pdu.dataCoding,
      esmClass: pdu.esmClass,
      shortMessage: pdu.command === 'deliver_sm' ? pdu.shortMessage : Buffer.alloc(0),
      ...(tlvs?.messagePayload ? { messagePayload: tlvs.messagePayload } : {}),
      ...(sar ? { sar } : {}),
    });
    const route = this.#route(upstream, pdu.destinationAddr);
    const receivedAt = this.#clock.wallNow();
    const addressed = { upstream, ...route, source: pdu.sourceAddr, destination: pdu.destinationAddr, receivedAt };
    if (concat) {
      const outcome = await this.#store.recordInboundPart({ ...addressed, ...concat, piece, defaultAlphabet });
      if (outcome.kind === 'stored') this.#counters.inbound(upstream, 'stored');
      return;
    }
    const m = assembleMo(1, [piece], defaultAlphabet);
    // Debug only: the stored message and its event carry the flag; an SMSC must not be able to flood the log.
    if (m.problems.length > 0) this.#log.debug({ event: 'inbound_malformed', upstream, bind, problems: m.problems }, 'an MO message could not be decoded cleanly');
    await this.#store.recordInbound({
      ...addressed, text: m.text, dataCoding: m.dataCoding, parts: 1, problems: m.problems, ...(m.raw ? { raw: m.raw } : {}),
    });
    this.#counters.inbound(upstream, 'stored');
  }
}
