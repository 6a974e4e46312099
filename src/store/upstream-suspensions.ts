/**
 * The store's role for suspended upstreams: an operator's suspension (the admin API's suspend)
 * is kept here, so that it holds across restarts and, with a shared store, on every instance.
 * The contract every role shares (commits, times) is in `store.ts`.
 */

/** An upstream suspended: no new sends go to it until it is resumed. */
export interface UpstreamSuspension {
  upstream: string;
  /** When it was suspended (wall ms). */
  since: number;
  /** The admin who suspended it (`admin.tokens[].name`). */
  by: string;
  /** Why, as the admin said; null when not said. */
  reason: string | null;
}

export interface UpstreamSuspensions {
  /** Every suspension in force, by upstream name. */
  listSuspensions(): Promise<UpstreamSuspension[]>;

  /**
   * Suspends `s.upstream`. Idempotent: an upstream already suspended keeps its suspension (its
   * time, admin and reason), which is returned; else `s` is stored and returned.
   */
  suspendUpstream(s: UpstreamSuspension): Promise<UpstreamSuspension>;

  /** Ends the suspension of `upstream`; whether it was suspended. Idempotent. */
  resumeUpstream(upstream: string): Promise<boolean>;
}
