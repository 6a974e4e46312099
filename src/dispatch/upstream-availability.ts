/**
 * Which upstreams can send now. An upstream is available while at least one of its binds is
 * bound (a bind stopped for bad credentials is never bound again); it has *failed over* once it
 * has been unavailable for its `failoverAfterSeconds`: its queued parts then move to the next
 * available upstream of their route, and the dispatcher stops handing it work. From start-up until
 * its first bind is up an upstream counts as unavailable since the start.
 *
 * An upstream an operator suspended (`setSuspended`) is unavailable, and failed over, at once,
 * whatever its binds: its binds stay up (receipts and inbound messages still come in), but routes
 * send elsewhere, and its queued messages move.
 */
import type { Clock } from '../core/clock.js';

export interface AvailabilityUpstream {
  name: string;
  binds: number;
  /** Unavailable this long, an upstream has failed over (`upstreams[].failoverAfterSeconds`). */
  failoverAfterMs: number;
}

export interface UpstreamAvailabilityView {
  name: string;
  available: boolean;
  bound: number;
  binds: number;
  /** Whole seconds it has been unavailable (0 while available). */
  unavailableSeconds: number;
  failedOver: boolean;
  /** Suspended by an operator: unavailable whatever its binds. */
  suspended: boolean;
}

interface Entry {
  u: AvailabilityUpstream;
  bound: Set<string>;
  /** Monotonic ms since it is unavailable; undefined while available. */
  downSince: number | undefined;
}

export type AvailabilityListener = (upstream: string, available: boolean) => void;

export class UpstreamAvailability {
  readonly #clock: Clock;
  readonly #entries: Map<string, Entry>;
  readonly #listeners = new Set<AvailabilityListener>();
  readonly #suspended = new Set<string>();

  constructor(clock: Clock, upstreams: readonly AvailabilityUpstream[]) {
    this.#clock = clock;
    const now = clock.now();
    this.#entries = new Map(upstreams.map((u) => [u.name, { u, bound: new Set<string>(), downSince: now }]));
  }

  /** A bind's state changed (the pool's `onBindState`): 'bound' counts, every other state does not. */
  bindState(upstream: string, bind: string, state: string): void {
    const e = this.#entries.get(upstream);
    if (!e) return;
    const was = e.bound.size > 0;
    const before = this.available(upstream);
    if (state === 'bound') e.bound.add(bind);
    else e.bound.delete(bind);
    const is = e.bound.size > 0;
    if (was === is) return;
    e.downSince = is ? undefined : this.#clock.now();
    this.#tell(upstream, before);
  }

  /** An operator suspended `upstream` (or resumed it): unavailable and failed over while suspended. */
  setSuspended(upstream: string, suspended: boolean): void {
    if (!this.#entries.has(upstream) || this.#suspended.has(upstream) === suspended) return;
    const before = this.available(upstream);
    if (suspended) this.#suspended.add(upstream);
    else this.#suspended.delete(upstream);
    this.#tell(upstream, before);
  }

  isSuspended(upstream: string): boolean {
    return this.#suspended.has(upstream);
  }

  /** The listeners, when the upstream's availability is not `before` any more. */
  #tell(upstream: string, before: boolean): void {
    const now = this.available(upstream);
    if (now === before) return;
    for (const l of this.#listeners) l(upstream, now);
  }

  /** Called on every change of an upstream's availability; returns the unsubscribe. */
  onChange(listener: AvailabilityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** At least one bind bound, and not suspended. An upstream this instance does not know is not available. */
  available(upstream: string): boolean {
    return (this.#entries.get(upstream)?.bound.size ?? 0) > 0 && !this.#suspended.has(upstream);
  }

  /** Suspended, or unavailable for at least its `failoverAfterMs`. */
  failedOver(upstream: string): boolean {
    if (this.#suspended.has(upstream)) return this.#entries.has(upstream);
    const e = this.#entries.get(upstream);
    return e?.downSince !== undefined && this.#clock.now() - e.downSince >= e.u.failoverAfterMs;
  }

  /** Milliseconds until an unavailable upstream fails over (0 once it has, or when suspended); undefined while available. */
  failsOverInMs(upstream: string): number | undefined {
    if (this.#suspended.has(upstream) && this.#entries.has(upstream)) return 0;
    const e = this.#entries.get(upstream);
    if (e?.downSince === undefined) return undefined;
    return Math.max(0, e.downSince + e.u.failoverAfterMs - this.#clock.now());
  }

  has(upstream: string): boolean {
    return this.#entries.has(upstream);
  }

  view(): UpstreamAvailabilityView[] {
    const now = this.#clock.now();
    return [...this.#entries.values()].map((e) => {
      const suspended = this.#suspended.has(e.u.name);
      return {
        name: e.u.name,
        available: e.bound.size > 0 && !suspended,
        bound: e.bound.size,
        binds: e.u.binds,
        unavailableSeconds: e.downSince === undefined ? 0 : Math.floor((now - e.downSince) / 1000),
        failedOver: suspended || (e.downSince !== undefined && now - e.downSince >= e.u.failoverAfterMs),
        suspended,
      };
    });
  }
}
