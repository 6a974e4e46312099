/**
 * Room in the queue (the 429 decisions): queued parts in all (`limits.maxQueued`) and per client
 * (`clients[].maxQueued`), as the store counted them at its last reading, plus what this process
 * has let in since. A send reserves its parts before it is stored; a sendbulk upload reserves
 * all of its parts at once, before its first number is stored, and is refused whole when they do
 * not fit. What is reserved stays counted until it is stored and a reading of the store that
 * began after its commit counts it: two requests never pass through the same room.
 *
 * Several instances sharing a PostgreSQL store each count what the others have stored by their
 * last reading (at most a second old), not what they have reserved and not yet stored.
 */
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { QueueDepth } from '../store/intake.js';

/**
 * How often the queue depth is read from the store: every 250 ms once the last reading (with what
 * is reserved) is at half a cap or more, every second below that. Counting the queued parts
 * costs the store a walk of them (with 45,000 queued, a fifth of a core of PostgreSQL at four
 * counts a second per instance); far below the limits a reading a second old decides the same.
 */
export const DEPTH_REFRESH_MS = 250;
export const DEPTH_REFRESH_FAR_MS = 1_000;

/**
 * The caps a QUEUE_FULL names (its `details.limit`): all clients' queued parts, or one client's
 * own. Past its own, only that client has to wait; past the other, everyone does.
 */
export const QUEUE_CAPS = { all: 'limits.maxQueued', client: 'clients[].maxQueued' } as const;

/** Retry-After, seconds: at least 1, at most this. */
const MAX_RETRY_AFTER_S = 600;

export interface QueueRoomOptions {
  /** The store's `queueDepth`. */
  readDepth: () => Promise<QueueDepth>;
  clock: Clock;
  /** Queued parts of all clients, at most (`limits.maxQueued`, ≥ 1). */
  maxQueued: number;
  /** Each client's own cap on its queued parts (`clients[].maxQueued`, ≥ 1); a client not in it has none. */
  clientMaxQueued?: ReadonlyMap<string, number>;
  /**
   * Parts a second the queue drains at, at most (the upstream's binds × ratePerBind; 0: no
   * limit): Retry-After says when the excess could have gone at that rate. Default 0 (1 second).
   */
  drainPerSecond?: number;
}

/** Room held for parts about to be stored. Each part is given back once: stored or released. */
export interface Reservation {
  /** `parts` of it were committed queued: they stay counted until the next reading of the store that began after now. */
  stored(parts: number): void;
  /** Gives back what is neither stored nor given back yet (a failed accept, the rest of an upload, a send that went to the pool directly). */
  release(): void;
}

/** Parts committed, not yet in a reading: counted until a reading numbered above `after` has come back. */
interface Stored {
  client: string;
  parts: number;
  after: number;
}

export class QueueRoom {
  readonly #o: QueueRoomOptions;
  #clientCaps: ReadonlyMap<string, number>;
  #depth = { total: 0, byClient: new Map<string, number>(), readAt: -Infinity };
  /** The reading under way: every request that finds the last one too old waits for this one. */
  #reading: Promise<void> | null = null;
  /** Readings started so far. */
  #readings = 0;
  readonly #held = new Tally();
  readonly #stored = new Tally();
  #storedLog: Stored[] = [];

  constructor(o: QueueRoomOptions) {
    this.#o = o;
    this.#clientCaps = o.clientMaxQueued ?? new Map();
  }

  /** SIGHUP: the caps of the clients from the next request on (what is queued and reserved stays counted). */
  setClientMaxQueued(caps: ReadonlyMap<string, number>): void {
    this.#clientCaps = caps;
  }

  /**
   * Holds room for `parts` queued parts of `client`, or throws QUEUE_FULL (429) naming the cap
   * they would pass: `limits.maxQueued`, or the client's `clients[].maxQueued`. With `parts` 0,
   * only refuses when a cap is already reached (a bulk upload before its file is counted).
   */
  async reserve(client: string, parts: number): Promise<Reservation> {
    const cap = this.#clientCaps.get(client);
    const now = this.#o.clock.now();
    const near = this.#usedTotal() * 2 >= this.#o.maxQueued || (cap !== undefined && this.#usedBy(client) * 2 >= cap);
    if (now - this.#depth.readAt >= (near ? DEPTH_REFRESH_MS : DEPTH_REFRESH_FAR_MS)) await this.#read(now);
    // From here to the hold, no await: a request that waited for the same reading sees this hold.
    this.#refuseOver(this.#usedTotal(), this.#o.maxQueued, parts, (n) => `the queue holds ${partsText(n)}`, QUEUE_CAPS.all);
    if (cap !== undefined) this.#refuseOver(this.#usedBy(client), cap, parts, (n) => `client ${client} has ${partsText(n)} queued`, QUEUE_CAPS.client);
    return this.#hold(client, parts);
  }

  #refuseOver(used: number, cap: number, parts: number, holds: (n: number) => string, key: string): void {
    if (parts === 0 ? used < cap : used + parts <= cap) return;
    const excess = Math.max(1, used + parts - cap);
    const rate = this.#o.drainPerSecond ?? 0;
    const retryAfterSeconds = rate > 0 ? Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(excess / rate))) : 1;
    const message = parts > cap
      ? `this request needs ${parts} queued parts, more than ${key} (${cap}) allows: split it`
      : `${holds(used)}; ${key} is ${cap}${parts > 0 ? ` and this request needs ${parts} more` : ''}: retry later`;
    throw new SmppdError(ErrorCode.QUEUE_FULL, message, { retryAfterSeconds, limit: key });
  }

  #hold(client: string, parts: number): Reservation {
    let held = parts;
    this.#held.add(client, held);
    return {
      stored: (n) => {
        const s = Math.min(n, held);
        if (s <= 0) return;
        held -= s;
        this.#held.add(client, -s);
        this.#stored.add(client, s);
        const last = this.#storedLog.at(-1);
        // An upload's chunks between two readings: one entry.
        if (last?.client === client && last.after === this.#readings) last.parts += s;
        else this.#storedLog.push({ client, parts: s, after: this.#readings });
      },
      release: () => {
        this.#held.add(client, -held);
        held = 0;
      },
    };
  }

  #usedTotal(): number {
    return this.#depth.total + this.#held.total + this.#stored.total;
  }

  #usedBy(client: string): number {
    return (this.#depth.byClient.get(client) ?? 0) + this.#held.of(client) + this.#stored.of(client);
  }

  /**
   * One reading at a time: under load hundreds of requests find the reading too old in the same
   * few milliseconds (a RabbitMQ prefetch, a burst of sendSms), and each asking for its own count
   * made 78 counts a second of the queued parts, the PostgreSQL store's most expensive statement.
   */
  #read(now: number): Promise<void> {
    this.#reading ??= (() => {
      const number = ++this.#readings;
      return this.#o.readDepth()
        .then((d) => {
          this.#depth = { total: d.queued, byClient: new Map(d.byClient.map((c) => [c.client, c.queued])), readAt: now };
          this.#forgetCounted(number);
        })
        .finally(() => { this.#reading = null; });
    })();
    return this.#reading;
  }

  /** What was stored before reading `number` began is in it. */
  #forgetCounted(number: number): void {
    const keep: Stored[] = [];
    for (const s of this.#storedLog) {
      if (s.after < number) this.#stored.add(s.client, -s.parts);
      else keep.push(s);
    }
    this.#storedLog = keep;
  }
}

/** Parts per client, and in all. */
class Tally {
  readonly #by = new Map<string, number>();
  total = 0;

  of(client: string): number {
    return this.#by.get(client) ?? 0;
  }

  add(client: string, n: number): void {
    if (n === 0) return;
    this.total += n;
    const v = this.of(client) + n;
    if (v === 0) this.#by.delete(client);
    else this.#by.set(client, v);
  }
}

/** `1 part`, `2 parts`. */
function partsText(n: number): string {
  return `${n} part${n === 1 ? '' : 's'}`;
}
