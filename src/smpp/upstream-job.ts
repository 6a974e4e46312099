/** One message in an upstream's pool (`UpstreamPool`), what a bind carries with each submit of it, and a submit that threw. */
import type { ScopedWarnings } from '../core/warning-throttle.js';
import type { Bind } from './bind.js';
import type { AcceptedOutcome, MessageOutcome, PartOutcome, StorePart, SubmitPart, UncertainWhy } from './part-outcome.js';
import { isUnencodable } from './wire.js';

/** Characters of an internal error's message kept in the part's reason (the log has it whole). */
const MAX_INTERNAL_REASON = 200;

export interface Job {
  ticket: number;
  parts: SubmitPart[];
  outcomes: PartOutcome[];
  index: number;
  attempts: number;
  /** Identifies the current attempt; responses to older attempts are duplicates. */
  attempt: number;
  inFlight: boolean;
  /** Policy `fail`: timed out, waiting for a late response until the grace period ends. */
  awaitingLate: boolean;
  done: boolean;
  /** The caller stores each accepted part before its slot is given back (`submit`'s `storePart`). */
  storePart: StorePart | undefined;
  /** The bind whose slot the message's accepted last part holds until the caller's `release`. */
  heldOn: Bind<Ctx> | undefined;
  resolve: (outcome: MessageOutcome) => void;
}

export interface Ctx {
  job: Job;
  attempt: number;
  part: number;
  bind: Bind<Ctx>;
}

/**
 * The outcome of a part whose submit threw. The encoder's refusals mean the message can never be
 * sent: 'invalid'. Anything else is a fault of smppd's, not of the message: 'internal', and an
 * error line (one per interval per upstream, with the count, should it repeat for every part).
 */
export function notSent(e: unknown, bind: string, warnings: ScopedWarnings): PartOutcome {
  if (isUnencodable(e)) return { kind: 'invalid', reason: e.message };
  const error = e instanceof Error ? e : new Error(String(e));
  warnings.error('submit_internal_error', {
    event: 'submit_internal_error', bind, error: error.message, ...(error.stack !== undefined ? { stack: error.stack } : {}),
  }, 'sending a part failed inside smppd (a bug); the part ends FAILED, not sent');
  return { kind: 'internal', reason: error.message.slice(0, MAX_INTERNAL_REASON) };
}

/**
 * Why an uncertain part is not resent (called once it is decided it is not). A part that used up
 * its attempts is 'attempts' even when the pool is stopping: the stop only ended the wait for an
 * answer (the last one cut short, or a late one), it kept no resend from happening, and a requeue
 * would send the part more than `maxAttempts` times.
 */
export function uncertainWhy(job: Job, settings: { onUncertain: 'resend' | 'fail'; maxAttempts: number }): UncertainWhy {
  if (settings.onUncertain === 'fail') return 'policy';
  return job.attempts >= settings.maxAttempts ? 'attempts' : 'stopped';
}

/**
 * An accepted part keeps the window slot it answered in until it is stored (`submit`'s
 * `storePart`): an earlier part is stored now, on its own, so that a crash before the message
 * ends cannot send it again; the last one is stored with the message's outcome (`release`).
 */
export function holdUntilStored(job: Job, bind: Bind<Ctx>, outcome: AcceptedOutcome): void {
  if (job.storePart === undefined) return;
  bind.hold();
  if (job.index === job.parts.length - 1) {
    job.heldOn = bind;
    return;
  }
  const release = (): void => bind.release();
  job.storePart(job.index, outcome).then(release, release);
}
