/**
 * Upstreams an operator suspended (the admin API's suspend and resume), kept in the store so that
 * a suspension holds across restarts and, with a shared store, on every instance. A suspended
 * upstream is unavailable to routing at once (no `failoverAfterSeconds` wait): new sends take the
 * next available upstream of their route, the dispatcher claims nothing for it, its pool starts no
 * message (those it holds come back to the queue) and the failover pass moves its queued messages
 * to the next upstream of their route; with none, they wait in the queue. What is on the wire
 * finishes, and its binds stay bound for receipts and inbound messages. Resume undoes it.
 *
 * Loaded at start; with a store that several instances share, read again every few seconds
 * (`refreshEveryMs`), so one instance's suspend reaches the others.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { UpstreamSuspension, UpstreamSuspensions } from '../store/upstream-suspensions.js';

export interface SuspensionsOptions {
  store: UpstreamSuspensions;
  /** Told each change of an upstream's suspension (routing's availability; the pool). */
  apply: (upstream: string, suspended: boolean) => void;
  /** The configured upstreams: a suspension of another name (one removed from the config) is ignored. */
  upstreams: readonly string[];
  clock: Clock;
  log: Log;
  /** How often the store is read again (a store shared by several instances); absent: never after the start. */
  refreshEveryMs?: number;
}

export class Suspensions {
  readonly #o: SuspensionsOptions;
  readonly #names: ReadonlySet<string>;
  readonly #current = new Map<string, UpstreamSuspension>();
  readonly #task: RepeatingTask | undefined;
  /** Local suspends and resumes under way, and done: a read of the store that began before one ended is stale. */
  #changing = 0;
  #changes = 0;

  constructor(o: SuspensionsOptions) {
    this.#o = o;
    this.#names = new Set(o.upstreams);
    this.#task = o.refreshEveryMs === undefined ? undefined : new RepeatingTask({
      clock: o.clock, everyMs: o.refreshEveryMs, run: () => this.refresh(),
      onError: (e) => o.log.error({ event: 'store_error', err: e }, 'reading the suspended upstreams failed; retrying'),
    });
  }

  /** The suspensions in the store, applied before anything is sent. */
  async load(): Promise<void> {
    await this.refresh();
  }

  /** Reads the store again every `refreshEveryMs` (when given). */
  start(): void {
    this.#task?.start(this.#o.refreshEveryMs);
  }

  async stop(): Promise<void> {
    await this.#task?.stop();
  }

  /** The store's suspensions applied: those another instance made or ended are taken up here. */
  async refresh(): Promise<void> {
    const changes = this.#changes;
    const rows = await this.#o.store.listSuspensions();
    // A suspend or resume of this instance ran meanwhile: the next read has it.
    if (this.#changing > 0 || changes !== this.#changes) return;
    const stored = new Map(rows.filter((s) => this.#names.has(s.upstream)).map((s) => [s.upstream, s]));
    for (const [upstream, s] of stored) {
      if (this.#current.has(upstream)) continue;
      this.#set(s);
      this.#o.log.warn({ event: 'upstream_suspended', upstream, by: s.by, reason: s.reason, since: new Date(s.since).toISOString(), seen: 'store' },
        'upstream suspended (found in the store): no new sends go to it');
    }
    for (const upstream of [...this.#current.keys()]) {
      if (stored.has(upstream)) continue;
      this.#unset(upstream);
      this.#o.log.warn({ event: 'upstream_resumed', upstream, by: null, seen: 'store' }, 'upstream resumed (gone from the store): it takes sends again');
    }
  }

  /** The suspension of `upstream`, or undefined. */
  get(upstream: string): UpstreamSuspension | undefined {
    return this.#current.get(upstream);
  }

  isSuspended(upstream: string): boolean {
    return this.#current.has(upstream);
  }

  /**
   * Suspends `upstream` for `by` (an admin's name): stored first, then in force here before this
   * resolves. Idempotent: one suspended already keeps its suspension, which is returned. Throws
   * UNKNOWN_UPSTREAM for a name the config does not have.
   */
  async suspend(upstream: string, by: string, reason: string | null): Promise<UpstreamSuspension> {
    this.#known(upstream);
    return this.#change(async () => {
      const s = await this.#o.store.suspendUpstream({ upstream, since: this.#o.clock.wallNow(), by, reason });
      if (!this.#current.has(upstream)) {
        this.#set(s);
        this.#o.log.warn({ event: 'upstream_suspended', upstream, by, reason }, 'upstream suspended: no new sends go to it; what is outstanding finishes, its binds stay up');
      }
      return s;
    });
  }

  /** Ends the suspension of `upstream` for `by`; idempotent. Throws UNKNOWN_UPSTREAM for a name the config does not have. */
  async resume(upstream: string, by: string): Promise<void> {
    this.#known(upstream);
    await this.#change(async () => {
      await this.#o.store.resumeUpstream(upstream);
      if (!this.#current.has(upstream)) return;
      this.#unset(upstream);
      this.#o.log.warn({ event: 'upstream_resumed', upstream, by }, 'upstream resumed: it takes sends again');
    });
  }

  async #change<T>(run: () => Promise<T>): Promise<T> {
    this.#changing++;
    try {
      return await run();
    } finally {
      this.#changing--;
      this.#changes++;
    }
  }

  #known(upstream: string): void {
    if (!this.#names.has(upstream)) throw new SmppdError(ErrorCode.UNKNOWN_UPSTREAM, `no upstream named ${JSON.stringify(upstream)} in the configuration`);
  }

  #set(s: UpstreamSuspension): void {
    this.#current.set(s.upstream, s);
    this.#o.apply(s.upstream, true);
  }

  #unset(upstream: string): void {
    this.#current.delete(upstream);
    this.#o.apply(upstream, false);
  }
}
