/**
 * The retention sweep (`store.retentionDays`): deletes what the store has finished with and is
 * older than the retention (`RetentionPruning.pruneFinished` says what that is), so the store does not grow
 * without end. It runs at start and then every `RETENTION_SWEEP_EVERY_MS` after the previous
 * sweep ended. A sweep is a series of short store calls, each looking at `RETENTION_BATCH` rows at
 * most in one commit; the hot path's writes run between them, and after each call the sweep waits
 * as long as the call took, so a sweep through a large backlog (the first after an upgrade, or
 * after retention was shortened) takes at most half of the store's time.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { PruneCounts, PruneCursor, RetentionPruning } from '../store/retention.js';

/** Between the end of one sweep and the start of the next. */
export const RETENTION_SWEEP_EVERY_MS = 600_000;
/** Rows one store call looks at, at most (so it deletes at most this many messages). */
export const RETENTION_BATCH = 1_000;

const DAY_MS = 86_400_000;

/** What the sweep deleted, by the `kind` label of `smppd_store_pruned_total`. */
export type PrunedKind = 'message' | 'batch' | 'inbound';

export interface RetentionMetrics {
  storePruned(kind: PrunedKind, count: number): void;
}

export interface RetentionSweepOptions {
  store: RetentionPruning;
  clock: Clock;
  log: Log;
  /** Days a finished row is kept. > 0 (0, keep everything, means no sweep: do not build one). */
  retentionDays: number;
  metrics?: RetentionMetrics;
  /** Default RETENTION_SWEEP_EVERY_MS. */
  everyMs?: number;
  /** Default RETENTION_BATCH. */
  batch?: number;
}

/** One sweep's deletions, and the cutoff it used (ms since the epoch). */
export interface SweepResult {
  messages: number;
  batches: number;
  inbound: number;
  cutoff: number;
  /** Store calls made. */
  calls: number;
}

export class RetentionSweep {
  readonly #o: RetentionSweepOptions & { everyMs: number; batch: number };
  /** The wait between two calls of a sweep, and how to end it early (stop). */
  #pause: { timer: TimerHandle; end: () => void } | undefined;
  readonly #sweeps: RepeatingTask;
  #stopped = true;

  constructor(o: RetentionSweepOptions) {
    if (!(o.retentionDays > 0)) throw new RangeError(`retentionDays must be > 0; got ${o.retentionDays}`);
    this.#o = { everyMs: RETENTION_SWEEP_EVERY_MS, batch: RETENTION_BATCH, ...o };
    this.#sweeps = new RepeatingTask({
      clock: o.clock, everyMs: this.#o.everyMs,
      run: async () => { await this.sweep(); },
      onError: (e) => this.#o.log.error({ event: 'store_error', err: e }, 'the retention sweep failed; it runs again at the next period'),
    });
  }

  /** Sweeps now, and again every `everyMs` after each sweep. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#sweeps.start();
  }

  /** No more sweeps; resolves when the store call under way (if any) has returned. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pause?.timer.cancel();
    this.#pause?.end();
    await this.#sweeps.stop();
  }

  /** One sweep: store calls until the store has looked at every row older than the cutoff, or the sweep is stopped. */
  async sweep(): Promise<SweepResult> {
    const cutoff = this.#o.clock.wallNow() - this.#o.retentionDays * DAY_MS;
    const result: SweepResult = { messages: 0, batches: 0, inbound: 0, cutoff, calls: 0 };
    let after: PruneCursor | null = null;
    do {
      const startedAt = this.#o.clock.now();
      const counts: PruneCounts = await this.#o.store.pruneFinished(cutoff, this.#o.batch, after);
      result.calls++;
      this.#count(result, counts);
      after = counts.next;
      const took = this.#o.clock.now() - startedAt;
      if (after !== null && took > 0 && !this.#stopped) await this.#wait(took);
    } while (after !== null && !this.#stopped);
    if (result.messages + result.batches + result.inbound > 0) {
      this.#o.log.info({
        event: 'retention_sweep', messages: result.messages, batches: result.batches, inbound: result.inbound,
        cutoff: new Date(cutoff).toISOString(), retentionDays: this.#o.retentionDays,
      }, 'deleted finished messages, empty batches and inbound messages older than store.retentionDays');
    }
    return result;
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const end = (): void => {
        this.#pause = undefined;
        resolve();
      };
      this.#pause = { timer: this.#o.clock.setTimer(ms, end), end };
    });
  }

  #count(result: SweepResult, counts: PruneCounts): void {
    result.messages += counts.messages;
    result.batches += counts.batches;
    result.inbound += counts.inbound;
    const metrics = this.#o.metrics;
    if (!metrics) return;
    if (counts.messages > 0) metrics.storePruned('message', counts.messages);
    if (counts.batches > 0) metrics.storePruned('batch', counts.batches);
    if (counts.inbound > 0) metrics.storePruned('inbound', counts.inbound);
  }
}
