/**
 * What the SMSC sends us: each deliver_sm or data_sm is a receipt (matched to its part, or
 * parked until its submit_sm_resp is recorded) or an MO message (reassembled, stored). The
 * answer goes back only after the store committed it; when the store fails, the answer is a
 * temporary error so that the SMSC delivers it again instead of it being lost.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { Status } from '../smpp/command-status.js';
import type { DataSmPdu, DeliverSmPdu } from '../smpp/pdu.js';
import type { Store } from '../store/store.js';
import { MoReassembler } from '../sms/inbound.js';
import type { DefaultAlphabet } from '../sms/text-codec.js';
import type { InboundRoute } from './inbound-routing.js';
import { UpstreamReceipts, type ReceiptSettings } from './receipts.js';

export interface DeliveryUpstream extends ReceiptSettings {
  name: string;
  defaultAlphabet: DefaultAlphabet;
}

export interface DeliveryCounters {
  receipt(upstream: string, result: 'matched' | 'parked' | 'ignored' | 'unknown_stat' | 'error'): void;
  inbound(upstream: string): void;
}

const noCounters: DeliveryCounters = { receipt: () => {}, inbound: () => {} };

/** How long an incomplete MO waits for its other parts before it is stored as it is. */
const MO_MAX_WAIT_MS = 10 * 60_000;

export class Deliveries {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #counters: DeliveryCounters;
  readonly #route: (upstream: string, destination: string) => InboundRoute;
  readonly #upstreams = new Map<string, { receipts: UpstreamReceipts; mo: MoReassembler }>();

  constructor(o: {
    store: Store; clock: Clock; log: Log; upstreams: DeliveryUpstream[]; counters?: DeliveryCounters;
    /** Which client an MO belongs to (`InboundRouting.route`). Default: none. */
    routeInbound?: (upstream: string, destination: string) => InboundRoute;
  }) {
    this.#store = o.store;
    this.#route = o.routeInbound ?? (() => ({ client: null, events: false }));
    this.#clock = o.clock;
    this.#log = o.log;
    this.#counters = o.counters ?? noCounters;
    for (const u of o.upstreams) {
      this.#upstreams.set(u.name, { receipts: new UpstreamReceipts(u), mo: new MoReassembler({ defaultAlphabet: u.defaultAlphabet }) });
    }
  }

  /** The pool's deliver handler: resolves to the command_status of the deliver_sm_resp / data_sm_resp. */
  readonly handle = async (upstream: string, bind: string, pdu: DeliverSmPdu | DataSmPdu): Promise<number> => {
    const u = this.#upstreams.get(upstream);
    if (!u) return Status.RSYSERR;
    try {
      if (UpstreamReceipts.isReceipt(pdu)) await this.#receipt(upstream, bind, u.receipts, pdu);
      else await this.#inbound(upstream, u.mo, pdu);
      return Status.ROK;
    } catch (e) {
      this.#counters.receipt(upstream, 'error');
      this.#log.error({ event: 'store_error', upstream, bind, err: e }, 'could not store a deliver_sm; answered with a temporary error so the SMSC sends it again');
      return Status.RX_T_APPN;
    }
  };

  /** Stores MO messages that waited too long for their missing parts. Call now and then. */
  async flushStaleInbound(): Promise<void> {
    for (const [name, u] of this.#upstreams) {
      for (const m of u.mo.expire(this.#clock.now(), MO_MAX_WAIT_MS)) {
        await this.#store.recordInbound({
          upstream: name, ...this.#route(name, m.destination), source: m.source, destination: m.destination, text: m.text,
          dataCoding: m.dataCoding, parts: m.parts, receivedAt: this.#clock.wallNow(),
        });
        this.#counters.inbound(name);
      }
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
    if (applied.kind === 'matched') {
      receipts.found(receipt.id ?? '', [applied.key]);
      this.#counters.receipt(upstream, outcome.status === null ? 'unknown_stat' : applied.changed ? 'matched' : 'ignored');
    } else {
      this.#counters.receipt(upstream, 'parked');
    }
  }

  async #inbound(upstream: string, mo: MoReassembler, pdu: DeliverSmPdu | DataSmPdu): Promise<void> {
    const tlvs = pdu.tlvs;
    const sar = tlvs?.sarMsgRefNum !== undefined && tlvs.sarTotalSegments !== undefined && tlvs.sarSegmentSeqnum !== undefined
      ? { refNum: tlvs.sarMsgRefNum, total: tlvs.sarTotalSegments, seq: tlvs.sarSegmentSeqnum }
      : undefined;
    const message = mo.add({
      source: pdu.sourceAddr,
      destination: pdu.destinationAddr,
      dataCoding: pdu.dataCoding,
      esmClass: pdu.esmClass,
      shortMessage: pdu.command === 'deliver_sm' ? pdu.shortMessage : Buffer.alloc(0),
      ...(tlvs?.messagePayload ? { messagePayload: tlvs.messagePayload } : {}),
      ...(sar ? { sar } : {}),
      receivedAt: this.#clock.now(),
    });
    // A part of a longer MO is held in memory and answered at once: the SMSC will not send it
    // again, so a crash before the last part loses the held parts. The last part is answered
    // only after the whole message is committed.
    if (!message) return;
    await this.#store.recordInbound({
      upstream, ...this.#route(upstream, message.destination), source: message.source, destination: message.destination, text: message.text,
      dataCoding: message.dataCoding, parts: message.parts, receivedAt: this.#clock.wallNow(),
    });
    this.#counters.inbound(upstream);
  }
}
