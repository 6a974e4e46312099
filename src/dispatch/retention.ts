/**
 * The retention sweep (`store.retentionDays`): deletes what the store has finished with and is
 * older than the retention (`RetentionPruning.pruneFinished` says what that is), so the store does not grow
 * without end. It runs at start and then every `RETENTION_SWEEP_EVERY_MS` after the previous
 * sweep ended. A sweep is a series of short store calls, each looking at `RETENTION_BATCH` rows at
 * most in one commit; the hot path's writes run between them, and after each call the sweep waits
 * as long as the call took, so a sweep through a large backlog (the first after an upgrade, or
 * after retention was shortened) takes at most half of the store's time. Each sweep then deletes
 * the idempotency keys that have expired (`IdempotencyKeys.pruneIdempotencyKeys`), as paced.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { IdempotencyKeys } from '../store/idempotency.js';
import type { PruneCounts, PruneCursor, RetentionPruning } from '../store/retention.js';

/** Between the end of one sweep and the start of the next. */
export const RETENTION_SWEEP_EVERY_MS = 600_000;
/** Rows one store call looks at, at most (so it deletes at most this many messages). */
export const RETENTION_BATCH = 1_000;

const DAY_MS = 86_400_000;

/** What the sweep deleted, by the `kind` label of `smppd_store_pruned_total`. */
export type PrunedKind = 'message' | 'batch' | 'inbound' | 'idempotency_key';

export interface RetentionMetrics {
  storePruned(kind: PrunedKind, count: number): void;
}

export interface RetentionSweepOptions {
  store: RetentionPruning & Pick<IdempotencyKeys, 'pruneIdempotencyKeys'>;
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
  /** Expired idempotency keys. */
  idempotencyKeys: number;
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
    const result: SweepResult = { messages: 0, batches: 0, inbound: 0, idempotencyKeys: 0, cutoff, calls: 0 };
    let after: PruneCursor | null = null;
    do {
      const counts: PruneCounts = await this.#paced(() => this.#o.store.pruneFinished(cutoff, this.#o.batch, after), (c) => c.next !== null);
      result.calls++;
      this.#count(result, counts);
      after = counts.next;
    } while (after !== null && !this.#stopped);
    const now = this.#o.clock.wallNow();
    let deleted: number;
    do {
      deleted = await this.#paced(() => this.#o.store.pruneIdempotencyKeys(now, this.#o.batch), (n) => n === this.#o.batch);
      result.calls++;
      result.idempotencyKeys += deleted;
      if (deleted > 0) this.#o.metrics?.storePruned('idempotency_key', deleted);
    } while (deleted === this.#o.batch && !this.#stopped);
    if (result.messages + result.batches + result.inbound + result.idempotencyKeys > 0) {
      this.#o.log.info({
        event: 'retention_sweep', messages: result.messages, batches: result.batches, inbound: result.inbound, idempotencyKeys: result.idempotencyKeys,
        cutoff: new Date(cutoff).toISOString(), retentionDays: this.#o.retentionDays,
      }, 'deleted finished messages, empty batches and inbound messages older than store.retentionDays, and expired idempotency keys');
    }
    return result;
  }

  /** One store call; when `more` says another follows, first a wait as long as the call took. */
  async #paced<T>(call: () => Promise<T>, more: (result: T) => boolean): Promise<T> {
    const startedAt = this.#o.clock.now();
    const result = await call();
    const took = this.#o.clock.now() - startedAt;
    if (more(result) && took > 0 && !this.#stopped) await this.#wait(took);
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
