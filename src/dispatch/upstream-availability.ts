/**
 * Which upstreams can send now. An upstream is available while at least one of its binds is
 * bound (a bind stopped for bad credentials is never bound again); it has *failed over* once it
 * has been unavailable for its `failoverAfterSeconds`: its queued parts then move to the next
 * available upstream of their route, and the dispatcher stops handing it work. From start-up until
 * its first bind is up an upstream counts as unavailable since the start.
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
    if (state === 'bound') e.bound.add(bind);
    else e.bound.delete(bind);
    const is = e.bound.size > 0;
    if (was === is) return;
    e.downSince = is ? undefined : this.#clock.now();
    for (const l of this.#listeners) l(upstream, is);
  }

  /** Called on every change of an upstream's availability; returns the unsubscribe. */
  onChange(listener: AvailabilityListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** At least one bind bound. An upstream this instance does not know is not available. */
  available(upstream: string): boolean {
    return (this.#entries.get(upstream)?.bound.size ?? 0) > 0;
  }

  /** Unavailable for at least its `failoverAfterMs`. */
  failedOver(upstream: string): boolean {
    const e = this.#entries.get(upstream);
    return e?.downSince !== undefined && this.#clock.now() - e.downSince >= e.u.failoverAfterMs;
  }

  /** Milliseconds until an unavailable upstream fails over (0 once it has); undefined while available. */
  failsOverInMs(upstream: string): number | undefined {
    const e = this.#entries.get(upstream);
    if (e?.downSince === undefined) return undefined;
    return Math.max(0, e.downSince + e.u.failoverAfterMs - this.#clock.now());
  }

  has(upstream: string): boolean {
    return this.#entries.has(upstream);
  }

  view(): UpstreamAvailabilityView[] {
    const now = this.#clock.now();
    return [...this.#entries.values()].map((e) => ({
      name: e.u.name,
      available: e.bound.size > 0,
      bound: e.bound.size,
      binds: e.u.binds,
      unavailableSeconds: e.downSince === undefined ? 0 : Math.floor((now - e.downSince) / 1000),
      failedOver: e.downSince !== undefined && now - e.downSince >= e.u.failoverAfterMs,
    }));
  }
}
