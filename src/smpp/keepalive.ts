import type { Clock, TimerHandle } from '../core/clock.js';

/** What the keepalive needs from a session: three methods, not the whole connection. */
export interface KeepaliveTarget {
  sendEnquireLink(): void;
  /** Milliseconds (monotonic) when the last PDU of any kind arrived. */
  lastReceivedAt(): number;
  closeDead(reason: string): void;
}

/**
 * Sends enquire_link every `intervalMs`. If nothing at all has arrived within `timeoutMs` of
 * sending one, the link is dead: the session is closed and the bind reconnects. Any PDU counts
 * as a sign of life, so a busy link under load is never closed for a response queued behind
 * submit_sm_resp traffic. One timer per session.
 */
export class Keepalive {
  #timer: TimerHandle | undefined;
  #probeSentAt: number | undefined;

  constructor(
    private readonly target: KeepaliveTarget,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
  ) {}

  start(): void {
    this.#schedule(this.intervalMs);
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #schedule(ms: number): void {
    this.#timer?.cancel();
    this.#timer = this.clock.setTimer(ms, () => this.#tick());
  }

  #tick(): void {
    const now = this.clock.now();
    if (this.#probeSentAt !== undefined) {
      if (this.target.lastReceivedAt() >= this.#probeSentAt) {
        const nextProbeAt = this.#probeSentAt + this.intervalMs;
        this.#probeSentAt = undefined;
        if (nextProbeAt > now) {
          this.#schedule(nextProbeAt - now);
          return;
        }
      } else if (now - this.#probeSentAt >= this.timeoutMs) {
        this.#timer = undefined;
        this.target.closeDead(`no answer to enquire_link within ${this.timeoutMs} ms`);
        return;
      } else {
        this.#schedule(this.#probeSentAt + this.timeoutMs - now);
        return;
      }
    }
    this.#probeSentAt = now;
    this.target.sendEnquireLink();
    this.#schedule(Math.min(this.intervalMs, this.timeoutMs));
  }
}
