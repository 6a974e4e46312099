/** What the metrics read from the daemon at scrape time (`Metrics`' constructor takes the readers). */

/** Per-bind readings taken at scrape time (the pool's `stats()`). */
export interface BindReading {
  id: string;
  upstream: string;
  state: string;
  outstanding: number;
  /** Slots of answers not stored yet: taken, though nothing is outstanding in them. */
  held: number;
  window: number;
  rate: number;
  tokens: number;
  submitted: number;
  throttleEpisodes: number;
  /** The rate the SMSC was last measured to accept; null before its first throttle. */
  learnedLimit: number | null;
  throttledSubmits: number;
  reconnects: number;
}

/** Per upstream with an `accountRate`, at scrape time (the pool's `accountStats()`). */
export interface AccountReading {
  upstream: string;
  share: number;
  rate: number;
  learnedLimit: number | null;
}

/** Outbox events per client (the store's `outboxDepth()`), read at scrape time. */
export interface OutboxReading {
  client: string;
  pending: number;
  dead: number;
}

/** The store's queue, read at scrape time. */
export interface QueueReading {
  queued: number;
  inflight: number;
  parked: number;
  /** Per upstream: seconds the first part a claim would take has been ready (0 when none is). */
  lagSeconds?: Record<string, number>;
}
