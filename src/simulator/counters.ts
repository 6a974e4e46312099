import { RateTracker } from '../core/rate-tracker.js';

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

/** What the SMSC saw on one bind (or, summed, on all of them). Counts since start or reset. */
export interface CounterValues {
  submitsReceived: number;
  /** submit_sm_resp and generic_nack written for submit_sm, by command_status name. */
  submitResponses: Record<string, number>;
  /** submit_sm answered ESME_RTHROTTLED by the throttle. */
  throttled: number;
  /** The most submit_sm ever received and not yet answered at once (a gauge's high mark). */
  maxOutstanding: number;
  /** submit_sm received whose response is not yet written (a gauge: not reset). */
  outstanding: number;
  /** The most submit_sm received in any 1-second window (10 ms steps). */
  maxSubmitsPerSecond: number;
  receiptsSent: number;
  /** Receipts for this bind's submits not yet sent (a gauge: not reset). */
  receiptsPending: number;
  receiptsRedelivered: number;
  /**
   * Receipts for this bind's submits that receiptRouting 'other-system-type' sent as 'same' would,
   * for want of a receiving bind of the account with another system_type.
   */
  receiptsRoutingFallback: number;
  /** deliver_sm_resp received, by command_status name. */
  deliverSmResponses: Record<string, number>;
  deliverSmRespReceived: number;
  moSent: number;
  enquireLinksReceived: number;
  genericNacksSent: number;
  genericNacksReceived: number;
  malformedReceived: number;
  unbindsReceived: number;
}

export interface BindSnapshot extends CounterValues {
  bindId: number;
  systemId: string;
  /** The system_type the bind PDU carried ('' when none). */
  systemType: string;
  bindMode: BindMode;
  remoteAddress: string;
  /** ISO 8601. */
  connectedAt: string;
  closed: boolean;
  closedAt: string | null;
}

/** Sums over every bind, plus what belongs to no bind. */
export interface TotalCounters extends CounterValues {
  connectionsAccepted: number;
  bindsRejected: number;
}

/** The JSON the status endpoint serves. */
export interface SimulatorCounters {
  startedAt: string | null;
  connectionsAccepted: number;
  connectionsOpen: number;
  bindsActive: number;
  bindsRejected: number;
  /** Rejected binds by command_status name. */
  bindsRejectedByStatus: Record<string, number>;
  /** Receipts due but with no receiving bind of their account to go to. */
  receiptsWaitingForReceiver: number;
  /**
   * Sums over every bind (closed ones too) and what unbound connections did; maxOutstanding is
   * the highest of any bind; maxSubmitsPerSecond is measured across all binds together.
   */
  totals: TotalCounters;
  binds: BindSnapshot[];
}

/** Mutable counters of one bind; fields are public because the hot path bumps them directly. */
export class BindCounters implements CounterValues {
  submitsReceived = 0;
  submitResponses: Record<string, number> = {};
  throttled = 0;
  maxOutstanding = 0;
  outstanding = 0;
  receiptsSent = 0;
  receiptsPending = 0;
  receiptsRedelivered = 0;
  receiptsRoutingFallback = 0;
  deliverSmResponses: Record<string, number> = {};
  deliverSmRespReceived = 0;
  moSent = 0;
  enquireLinksReceived = 0;
  genericNacksSent = 0;
  genericNacksReceived = 0;
  malformedReceived = 0;
  unbindsReceived = 0;
  readonly rate = new RateTracker();
  closedAt: number | null = null;

  constructor(
    readonly bindId: number,
    readonly systemId: string,
    readonly bindMode: BindMode,
    readonly remoteAddress: string,
    /** Wall-clock ms. */
    readonly connectedAt: number,
    /** The system_type the bind PDU carried. Default ''. */
    readonly systemType = '',
  ) {}

  get maxSubmitsPerSecond(): number {
    return this.rate.max;
  }

  submitReceived(now: number): void {
    this.submitsReceived++;
    this.rate.record(now);
    if (++this.outstanding > this.maxOutstanding) this.maxOutstanding = this.outstanding;
  }

  /** Zeroes the counts; the gauges (outstanding, receiptsPending) stay true. */
  reset(): void {
    this.submitsReceived = 0;
    this.submitResponses = {};
    this.throttled = 0;
    this.maxOutstanding = this.outstanding;
    this.receiptsSent = 0;
    this.receiptsRedelivered = 0;
    this.receiptsRoutingFallback = 0;
    this.deliverSmResponses = {};
    this.deliverSmRespReceived = 0;
    this.moSent = 0;
    this.enquireLinksReceived = 0;
    this.genericNacksSent = 0;
    this.genericNacksReceived = 0;
    this.malformedReceived = 0;
    this.unbindsReceived = 0;
    this.rate.reset();
  }

  values(): CounterValues {
    return {
      submitsReceived: this.submitsReceived,
      submitResponses: { ...this.submitResponses },
      throttled: this.throttled,
      maxOutstanding: this.maxOutstanding,
      outstanding: this.outstanding,
      maxSubmitsPerSecond: this.rate.max,
      receiptsSent: this.receiptsSent,
      receiptsPending: this.receiptsPending,
      receiptsRedelivered: this.receiptsRedelivered,
      receiptsRoutingFallback: this.receiptsRoutingFallback,
      deliverSmResponses: { ...this.deliverSmResponses },
      deliverSmRespReceived: this.deliverSmRespReceived,
      moSent: this.moSent,
      enquireLinksReceived: this.enquireLinksReceived,
      genericNacksSent: this.genericNacksSent,
      genericNacksReceived: this.genericNacksReceived,
      malformedReceived: this.malformedReceived,
      unbindsReceived: this.unbindsReceived,
    };
  }

  snapshot(): BindSnapshot {
    return {
      bindId: this.bindId,
      systemId: this.systemId,
      systemType: this.systemType,
      bindMode: this.bindMode,
      remoteAddress: this.remoteAddress,
      connectedAt: new Date(this.connectedAt).toISOString(),
      closed: this.closedAt !== null,
      closedAt: this.closedAt === null ? null : new Date(this.closedAt).toISOString(),
      ...this.values(),
    };
  }
}

export function bump(record: Record<string, number>, key: string, by = 1): void {
  record[key] = (record[key] ?? 0) + by;
}

/** Sums counter values; maxOutstanding is the highest, maxSubmitsPerSecond is left to the caller. */
export function sumCounters(all: CounterValues[]): CounterValues {
  const total = new BindCounters(0, '', 'transceiver', '', 0).values();
  for (const v of all) {
    total.submitsReceived += v.submitsReceived;
    for (const [k, n] of Object.entries(v.submitResponses)) bump(total.submitResponses, k, n);
    total.throttled += v.throttled;
    total.maxOutstanding = Math.max(total.maxOutstanding, v.maxOutstanding);
    total.outstanding += v.outstanding;
    total.receiptsSent += v.receiptsSent;
    total.receiptsPending += v.receiptsPending;
    total.receiptsRedelivered += v.receiptsRedelivered;
    total.receiptsRoutingFallback += v.receiptsRoutingFallback;
    for (const [k, n] of Object.entries(v.deliverSmResponses)) bump(total.deliverSmResponses, k, n);
    total.deliverSmRespReceived += v.deliverSmRespReceived;
    total.moSent += v.moSent;
    total.enquireLinksReceived += v.enquireLinksReceived;
    total.genericNacksSent += v.genericNacksSent;
    total.genericNacksReceived += v.genericNacksReceived;
    total.malformedReceived += v.malformedReceived;
    total.unbindsReceived += v.unbindsReceived;
  }
  return total;
}
