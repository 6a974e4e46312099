/**
 * Keeps the parking of receipts bounded (`upstreams[].parkedReceipts`). A receipt that matches no
 * part waits there for the submit_sm_resp that gives its part its id; an SMSC that sends receipts
 * for ids never issued, or another system's receipts on the same account, would otherwise fill
 * it. Per upstream, receipts older than `maxAgeMs` are dropped, then the oldest beyond `max`.
 *
 * The bound is kept off the receipt's path: a receipt parks in one insert, and nothing counts the
 * table then. The prune runs every `everyMs`, and at once when this instance has parked a tenth
 * of an upstream's `max` since the last prune (a Map increment per parked receipt), so the table
 * passes `max` by at most that tenth per instance, plus what parks during one prune. A prune is
 * a few indexed deletes per upstream (`ReceiptMatching.pruneParked`); one runs at a time.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { WarningThrottle } from '../core/warning-throttle.js';
import type { ParkedDropped, ReceiptMatching } from '../store/receipts.js';

export interface ParkingSettings {
  upstream: string;
  /** Receipts parked at most on this upstream (≥ 1). */
  max: number;
  /** Milliseconds a receipt stays parked at most (> 0). */
  maxAgeMs: number;
}

export interface ParkingCounters {
  /** Parked receipts dropped: too old ('age'), or the oldest past `max` ('cap'). */
  parkedDropped(upstream: string, reason: ParkedDropped['reason'], count: number): void;
}

/** How often the parking is pruned when nothing triggers it sooner, ms. */
export const PARKING_PRUNE_EVERY_MS = 60_000;
/** Parks since the last prune, as a share of `max`, that start a prune at once. */
const PRUNE_AT_SHARE = 0.1;

export class ReceiptParking {
  readonly #store: ReceiptMatching;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #warnings: WarningThrottle;
  readonly #counters: ParkingCounters | undefined;
  readonly #settings: ReadonlyMap<string, ParkingSettings & { pruneAt: number }>;
  /** Receipts parked per upstream since the last prune began. */
  readonly #parked = new Map<string, number>();
  /** One prune at a time; one asked for while one runs runs after it. */
  readonly #prunes: RepeatingTask;

  constructor(o: {
    store: ReceiptMatching; clock: Clock; log: Log; warnings: WarningThrottle; upstreams: readonly ParkingSettings[];
    counters?: ParkingCounters;
    /** Default `PARKING_PRUNE_EVERY_MS`. */
    everyMs?: number;
  }) {
    this.#store = o.store;
    this.#clock = o.clock;
    this.#log = o.log;
    this.#warnings = o.warnings;
    this.#counters = o.counters;
    this.#settings = new Map(o.upstreams.map((u) => [u.upstream, { ...u, pruneAt: Math.max(1, Math.ceil(u.max * PRUNE_AT_SHARE)) }]));
    this.#prunes = new RepeatingTask({
      clock: o.clock, everyMs: o.everyMs ?? PARKING_PRUNE_EVERY_MS,
      run: () => {
        this.#parked.clear();
        return this.#pruneOnce();
      },
      onError: (e) => this.#storeError(e),
    });
  }

  /** Prunes now (what an earlier run left may be far past the bounds), then every `everyMs`. */
  start(): void {
    this.#prunes.start(0);
  }

  /** No more prunes; resolves when the one under way (if any) is over. */
  stop(): Promise<void> {
    return this.#prunes.stop();
  }

  /** A receipt of `upstream` was parked: past a tenth of its `max` since the last prune, prune now. */
  parked(upstream: string): void {
    const n = (this.#parked.get(upstream) ?? 0) + 1;
    this.#parked.set(upstream, n);
    const settings = this.#settings.get(upstream);
    if (settings !== undefined && n >= settings.pruneAt) this.#prunes.runNow();
  }

  #storeError(e: unknown): void {
    this.#log.error({ event: 'store_error', err: e }, 'pruning parked receipts failed; trying again at the next prune');
  }

  async #pruneOnce(): Promise<void> {
    const now = this.#clock.wallNow();
    const limits = [...this.#settings.values()].map((s) => ({ upstream: s.upstream, before: now - s.maxAgeMs, max: s.max }));
    // Receipts of upstreams this configuration does not name: kept as long as the longest age it allows.
    const otherBefore = now - Math.max(0, ...[...this.#settings.values()].map((s) => s.maxAgeMs));
    const dropped: ParkedDropped[] = await this.#store.pruneParked(limits, otherBefore);
    for (const d of dropped) {
      this.#counters?.parkedDropped(d.upstream, d.reason, d.count);
      const fields = { event: 'parked_receipts_dropped', upstream: d.upstream, reason: d.reason, receipts: d.count };
      if (d.reason === 'cap') {
        const max = this.#settings.get(d.upstream)?.max;
        this.#warnings.warn(this.#log, `parked_cap@${d.upstream}`, { ...fields, max },
          'more receipts wait for a submit_sm_resp than parkedReceipts.max: the oldest were dropped (an SMSC sending receipts for ids never issued, or submit outcomes recorded late)');
      } else {
        // Expected now and then: receipts of messages another system sent on the same account.
        this.#warnings.info(this.#log, `parked_age@${d.upstream}`, fields,
          'parked receipts older than parkedReceipts.maxAgeSeconds were dropped: no submit_sm_resp of ours gave their id');
      }
    }
  }
}
