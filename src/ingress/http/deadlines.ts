/**
 * Per-request deadlines on what a client owes a request: its body, then taking its response.
 * Node's own `requestTimeout` is one value for the whole server, and sendbulk needs far longer
 * than a JSON body; and Node has none on a response the client does not read (a client that
 * pipelines requests and never reads holds its connection for good, at http.maxConnections
 * locking every other client out). So each request is watched here from when its headers arrive,
 * and one sweep a second, on the injected Clock, reports those whose body is still incomplete at
 * their deadline, or whose response, written whole, the client has not taken by its deadline.
 * While smppd itself is still answering, no deadline runs.
 *
 * No timer, no promise and no clock read per request: a request costs one array entry, looked at
 * by the next sweep (and by later ones only while its body or its response is under way). The
 * sweep that first sees a phase starts its deadline, so a request is reported no sooner than its
 * limit after its headers (or after its response was written) and at most two sweeps later.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, TimerHandle } from '../../core/clock.js';

/** How often the sweep runs: a request is answered at most this late. Milliseconds. */
export const SWEEP_MS = 1000;

/** A deadline kind: its length and what the refusal says. Made once, shared by every request. */
export interface DeadlineLimit {
  /**
   * Milliseconds from the end of the headers to the end of the body, and again from the end of
   * smppd's response to the client having taken it. > 0.
   */
  readonly ms: number;
  /** The 408's message: names the setting. */
  readonly message: string;
}

/** What a client failed to do in time: send the request's body, or take its response. */
export type Overdue = 'body' | 'response';

interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  limit: DeadlineLimit;
  /** Clock.now() by which the body must have arrived; set by the first sweep that sees it (0 until then). */
  bodyBy: number;
  /** Clock.now() by which the client must have taken the whole response; set by the first sweep that sees it written (0 until then). */
  takenBy: number;
}

/** Called once for a request the client did not finish its part of in time. */
export type OnExpired = (req: IncomingMessage, res: ServerResponse, limit: DeadlineLimit, overdue: Overdue) => void;

export class RequestDeadlines {
  /** Requests whose headers arrived since the last sweep. */
  #arrived: Watched[] = [];
  /** Requests seen by a sweep whose body or response is still under way. */
  #waiting: Watched[] = [];
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(private readonly clock: Clock, private readonly onExpired: OnExpired) {}

  /** Requests still watched (those the next sweep has not looked at included). */
  get watching(): number {
    return this.#arrived.length + this.#waiting.length;
  }

  /** The request's body must arrive, and its response be taken, each within `limit.ms` (counted from a sweep). */
  watch(req: IncomingMessage, res: ServerResponse, limit: DeadlineLimit): void {
    if (this.#stopped) return;
    this.#arrived.push({ req, res, limit, bodyBy: 0, takenBy: 0 });
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
    for (const w of this.#waiting) if (this.#stillWatched(w, now)) still.push(w);
    // Arrived within the last sweep: their deadline starts now, never earlier than their headers.
    for (const w of this.#arrived) if (this.#stillWatched(w, now)) still.push(w);
    this.#arrived = [];
    this.#waiting = still;
    if (still.length > 0 && !this.#stopped) this.#timer = this.clock.setTimer(SWEEP_MS, this.#sweep);
  };

  /** Reports `w` if its deadline has passed; whether a later sweep must look at it again. */
  #stillWatched(w: Watched, now: number): boolean {
    // Gone with its connection: nothing to wait for.
    if (w.req.destroyed || w.req.socket.destroyed) return false;
    if (!w.req.complete) {
      if (w.bodyBy === 0) w.bodyBy = now + w.limit.ms;
      if (w.bodyBy > now) return true;
      this.onExpired(w.req, w.res, w.limit, 'body');
      return false;
    }
    // Answered and taken: done. Still being answered: smppd's time, not the client's.
    if (w.res.writableFinished) return false;
    if (!w.res.writableEnded) return true;
    if (w.takenBy === 0) w.takenBy = now + w.limit.ms;
    if (w.takenBy > now) return true;
    this.onExpired(w.req, w.res, w.limit, 'response');
    return false;
  }
}
