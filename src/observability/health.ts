/**
 * Liveness and readiness as `/healthz` and `/readyz` report them. Ready means: not stopping,
 * the store usable, and at least one bind bound per upstream (a load balancer or systemd
 * watchdog then sends work only where it can go out). Reasons say what is missing.
 */
export interface ReadinessReading {
  /** false once the store failed (its worker died) or was closed. */
  storeOpen: boolean;
  /** Binds bound now, per upstream. */
  upstreams: ReadonlyArray<{ name: string; bound: number; binds: number }>;
}

export interface Readiness {
  ready: boolean;
  /** Why not, one line each; empty when ready. */
  reasons: string[];
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
    for (const u of reading.upstreams) {
      if (u.bound === 0) reasons.push(`upstream ${u.name}: no bind bound (0 of ${u.binds})`);
    }
    return { ready: reasons.length === 0, reasons };
  }
}
