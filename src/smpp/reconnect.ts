import { fullJitterDelay, type BackoffPolicy } from '../core/backoff.js';
import { CREDENTIAL_ERRORS } from './command-status.js';

/** Why a bind attempt or a bound session ended. */
export type SessionEnd =
  | { kind: 'bind_rejected'; commandStatus: number }
  | { kind: 'connect_failed'; error: string }
  /** The bind settings do not fit a bind PDU (a field too long, a NUL): nothing was sent. */
  | { kind: 'bind_unencodable'; error: string }
  | { kind: 'closed'; reason: string }
  | { kind: 'stopped' };

export type ReconnectDecision = { action: 'retry'; delayMs: number } | { action: 'stop'; reason: string };

/**
 * Decides what a bind does after its session ends: exponential backoff with full jitter,
 * capped, so binds that lost the SMSC together do not come back together. A successful bind
 * resets the steps, so one drop after a day of service does not wait a minute. Credential
 * errors (ESME_RINVPASWD, ESME_RINVSYSID) stop the bind for good: retrying a wrong password
 * gets the client's address banned. Settings that no bind PDU can carry stop it too. ESME_RALYBND (the SMSC still holds our previous bind) is
 * an ordinary retry: close, wait, rebind. Pure except for `random`.
 */
export class ReconnectPolicy {
  #attempt = 0;

  constructor(
    private readonly backoff: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  onBound(): void {
    this.#attempt = 0;
  }

  next(end: SessionEnd): ReconnectDecision {
    if (end.kind === 'stopped') return { action: 'stop', reason: 'stopped' };
    // Retrying cannot help: the same settings make the same PDU.
    if (end.kind === 'bind_unencodable') return { action: 'stop', reason: 'bind settings not encodable' };
    if (end.kind === 'bind_rejected' && CREDENTIAL_ERRORS.has(end.commandStatus)) {
      return { action: 'stop', reason: 'credentials rejected' };
    }
    return { action: 'retry', delayMs: fullJitterDelay(this.backoff, this.#attempt++, this.random()) };
  }
}
