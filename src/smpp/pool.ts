import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import { WarningThrottle } from '../core/warning-throttle.js';
import type { AccountPaceStats } from './account-pace.js';
import type { BindState, BindStats } from './bind.js';
import type { EngineMetrics } from './engine-metrics.js';
import type { MessageOutcome, StorePart, SubmitPart } from './part-outcome.js';
import { UpstreamPool, type DeliverHandler, type UpstreamSettings } from './upstream-pool.js';

export interface PoolOptions {
  upstreams: UpstreamSettings[];
  clock: Clock;
  log: Log;
  metrics: EngineMetrics;
  /** Receipts and MO messages; resolves to the deliver_sm_resp command_status. Default: log, answer 0. */
  deliver?: DeliverHandler;
  onBindState?: (upstream: string, bind: string, state: BindState, detail: string) => void;
  /**
   * Where warnings about what the SMSCs send go, once per kind per bind per interval; its owner
   * closes it. Default: the pool's own, at the default interval, closed by `stop`.
   */
  warnings?: WarningThrottle;
}

/**
 * Every upstream's binds behind one object (undici's pool shape): `submit` says through
 * `accepting(upstream)` whether it takes more, and the 'drain' event (with the upstream name)
 * says when to offer again.
 */
export class Pool {
  readonly #upstreams = new Map<string, UpstreamPool>();
  readonly #listeners = new Set<(upstream: string) => void>();
  /** The pool's own throttle, when the options gave none. */
  readonly #ownWarnings: WarningThrottle | undefined;

  constructor(options: PoolOptions) {
    this.#ownWarnings = options.warnings === undefined ? new WarningThrottle(options.clock) : undefined;
    const warnings = options.warnings ?? this.#ownWarnings!;
    const deliver: DeliverHandler = options.deliver ?? (async (upstream, bind, pdu) => {
      options.log.debug({ event: 'deliver_sm', upstream, bind, esmClass: pdu.esmClass }, 'deliver_sm received (no handler configured)');
      return 0;
    });
    for (const u of options.upstreams) {
      const log = options.log.child({ upstream: u.name });
      const pool = new UpstreamPool(u, options.clock, log, options.metrics, deliver, warnings,
        (bind, state, detail) => options.onBindState?.(u.name, bind, state, detail));
      pool.on('drain', () => { for (const l of this.#listeners) l(u.name); });
      this.#upstreams.set(u.name, pool);
    }
  }

  get upstreamNames(): string[] {
    return [...this.#upstreams.keys()];
  }

  start(): void {
    for (const u of this.#upstreams.values()) u.start();
  }

  accepting(upstream: string): boolean {
    return this.#get(upstream).accepting;
  }

  queued(upstream: string): number {
    return this.#get(upstream).queued;
  }

  /** Sends one message (its parts in order) through `upstream`; `priorAttempts` and `storePart` as `UpstreamPool.submit`'s. */
  submit(upstream: string, parts: SubmitPart[], priorAttempts?: number, storePart?: StorePart): Promise<MessageOutcome> {
    return this.#get(upstream).submit(parts, priorAttempts, storePart);
  }

  /** Calls `listener(upstream)` whenever an upstream that refused work takes it again. */
  onDrain(listener: (upstream: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  stats(): BindStats[] {
    return [...this.#upstreams.values()].flatMap((u) => u.stats());
  }

  /** `upstream`'s queued messages that have no part accepted go back to their callers ('withdrawn'); how many. */
  withdrawUnstarted(upstream: string): number {
    return this.#get(upstream).withdrawUnstarted();
  }

  /**
   * An operator suspended `upstream` (true) or resumed it: while suspended it starts no message
   * (those waiting and those handed over later come back 'withdrawn'), finishes the ones started,
   * and keeps its binds up for receipts and inbound messages.
   */
  suspend(upstream: string, suspended: boolean): void {
    this.#get(upstream).suspend(suspended);
  }

  /** Divides `upstream`'s `accountRate` among `instances` running instances (an equal share each). */
  setInstances(upstream: string, instances: number): void {
    this.#get(upstream).setInstances(instances);
  }

  /** Per upstream with an `accountRate`: its pacing. */
  accountStats(): Array<{ upstream: string } & AccountPaceStats> {
    return [...this.#upstreams.values()].flatMap((u) => {
      const a = u.accountStats();
      return a === undefined ? [] : [{ upstream: u.name, ...a }];
    });
  }

  /** Graceful stop: no new work, outstanding responses awaited up to `drainMs`, unbind, close. */
  async stop(drainMs: number): Promise<void> {
    await Promise.all([...this.#upstreams.values()].map((u) => u.stop(drainMs)));
    this.#ownWarnings?.close();
  }

  #get(upstream: string): UpstreamPool {
    const u = this.#upstreams.get(upstream);
    if (!u) throw new SmppdError(ErrorCode.UNKNOWN_UPSTREAM, `no upstream named ${upstream}`);
    return u;
  }
}
