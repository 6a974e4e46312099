/**
 * Liveness and readiness as `/healthz` and `/readyz` report them. Ready means: not stopping,
 * the store usable, and every route able to send: at least one of its upstreams has a bind
 * bound and is not suspended by an operator (a backup account idle by design does not make the
 * instance look broken; a route whose only upstream is suspended does). Reasons say
 * what is missing; the reading says which upstreams are available, for `smppd route`.
 */
export interface ReadinessReading {
  /** false once the store failed (its worker died) or was closed. */
  storeOpen: boolean;
  /** Binds bound now, per upstream, and whether an operator suspended it (absent: not). */
  upstreams: ReadonlyArray<{ name: string; bound: number; binds: number; suspended?: boolean }>;
  /** The routes and their upstreams. Absent: every upstream must have a bind bound. */
  routes?: ReadonlyArray<{ name: string; upstreams: readonly string[] }>;
}

export interface Readiness {
  ready: boolean;
  /** Why not, one line each; empty when ready. */
  reasons: string[];
  /** Each upstream: available while a bind of it is bound and it is not suspended. */
  upstreams: Array<{ name: string; available: boolean; bound: number; binds: number; suspended?: true }>;
}

export class Health {
  readonly #read: () => ReadinessReading;
  #stopping = false;

  constructor(read: () => ReadinessReading) {
    this.#read = read;
  }

  /** A stop began: readiness goes false at once, before the listener closes. */
  markStopping(): void {
    this.#stopping = true;
  }

  readiness(): Readiness {
    const reasons: string[] = [];
    if (this.#stopping) reasons.push('stopping');
    const reading = this.#read();
    if (!reading.storeOpen) reasons.push('the store is not open');
    const upstreams = reading.upstreams.map((u) => {
      const suspended = u.suspended === true;
      return { name: u.name, available: u.bound > 0 && !suspended, bound: u.bound, binds: u.binds, ...(suspended ? { suspended } : {}) };
    });
    const byName = new Map(upstreams.map((u) => [u.name, u]));
    const routes = reading.routes ?? reading.upstreams.map((u) => ({ name: `upstream ${u.name}`, upstreams: [u.name] }));
    for (const r of routes) {
      const of = r.upstreams.map((name) => byName.get(name) ?? { name, available: false, bound: 0, binds: 0 });
      if (of.some((u) => u.available)) continue;
      const binds = of.map((u) => `${u.name} ${u.bound} of ${u.binds} binds bound${u.suspended === true ? ', suspended' : ''}`).join(', ');
      const only = of[0];
      reasons.push(reading.routes ? `route ${r.name}: no upstream available (${binds})`
        : only?.suspended === true ? `upstream ${only.name}: suspended` : `upstream ${only?.name ?? r.name}: no bind bound (0 of ${only?.binds ?? 0})`);
    }
    return { ready: reasons.length === 0, reasons, upstreams };
  }
}
