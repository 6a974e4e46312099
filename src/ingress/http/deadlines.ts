/**
 * Per-request deadlines for the arrival of a request's body. Node's own `requestTimeout` is one
 * value for the whole server, and sendbulk needs far longer than a JSON body; so each request
 * is watched here from when its headers arrive, and one sweep a second, on the injected Clock,
 * answers those whose body is still incomplete at their deadline. No timer, no promise and no
 * clock read per request: a request costs one array entry, looked at by the next sweep (and by
 * later ones only while its body is still arriving). That sweep starts its deadline, so a body
 * is answered no sooner than its limit after its headers, and at most two sweeps later.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../core/clock.js';

/** How often the sweep runs: a request is answered at most this late. Milliseconds. */
export const SWEEP_MS = 1000;

/** A deadline kind: its length and what the refusal says. Made once, shared by every request. */
export interface DeadlineLimit {
  /** Milliseconds from the end of the headers to the end of the body. > 0. */
  readonly ms: number;
  /** The 408's message: names the setting. */
  readonly message: string;
}

interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  limit: DeadlineLimit;
  /** Clock.now() by which the body must have arrived; set by the first sweep that sees it (0 until then). */
  at: number;
}

/** Called once for a request whose body did not arrive by its deadline. */
export type OnExpired = (req: IncomingMessage, res: ServerResponse, limit: DeadlineLimit) => void;

export class RequestDeadlines {
  /** Requests whose headers arrived since the last sweep. */
  #arrived: Watched[] = [];
  /** Requests seen by a sweep whose body is still arriving. */
  #waiting: Watched[] = [];
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(private readonly clock: Clock, private readonly onExpired: OnExpired) {}

  /** Requests whose body is still awaited (those the next sweep has not looked at included). */
  get watching(): number {
    return this.#arrived.length + this.#waiting.length;
  }

  /** The request's body must arrive within `limit.ms` (counted from the next sweep). */
  watch(req: IncomingMessage, res: ServerResponse, limit: DeadlineLimit): void {
    if (this.#stopped) return;
    this.#arrived.push({ req, res, limit, at: 0 });
    // Armed only while there is something to look at: an idle server has no timer.
    this.#timer ??= this.clock.setTimer(SWEEP_MS, this.#sweep);
  }

  /** No more sweeps; what is watched is forgotten (the server has closed its connections). */
  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#arrived = [];
    this.#waiting = [];
  }

  readonly #sweep = (): void => {
    this.#timer = undefined;
    const now = this.clock.now();
    const still: Watched[] = [];
    for (const w of this.#waiting) {
      // Whole, or gone with its connection: nothing to wait for.
      if (w.req.complete || w.req.destroyed) continue;
      if (w.at <= now) this.onExpired(w.req, w.res, w.limit);
      else still.push(w);
    }
    // Arrived within the last sweep: their deadline starts now, never earlier than their headers.
    for (const w of this.#arrived) {
      if (w.req.complete || w.req.destroyed) continue;
      w.at = now + w.limit.ms;
      still.push(w);
    }
    this.#arrived = [];
    this.#waiting = still;
    if (still.length > 0 && !this.#stopped) this.#timer = this.clock.setTimer(SWEEP_MS, this.#sweep);
  };
}
