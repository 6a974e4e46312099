/**
 * What the store records of a part from what the pool made of it (`PartOutcome`): SENT with the
 * SMSC's id, a final status with its reason, or back to the queue.
 */
import type { PartOutcome } from '../smpp/part-outcome.js';
import { responseKey } from '../sms/message-id.js';
import { commandStatusReason } from '../sms/status.js';
import type { PartResult } from '../store/claims.js';

/** The pool's outcome of one part as what the store records. */
export function partResult(part: number, priorAttempts: number, o: PartOutcome | undefined, now: number): PartResult {
  if (o === undefined) return { part, kind: 'requeue', notBefore: now };
  switch (o.kind) {
    case 'accepted':
      return { part, kind: 'accepted', smscId: o.messageId, matchKey: responseKey(o.messageId), bind: o.bind, attempts: priorAttempts + o.attempts };
    case 'rejected':
      return { part, kind: 'final', status: 'REJECTED', reason: commandStatusReason({ code: o.commandStatus, name: o.statusName, class: 'reject' }), attempts: priorAttempts + o.attempts };
    case 'failed':
      return { part, kind: 'final', status: 'FAILED', reason: `retries exhausted: ${commandStatusReason({ code: o.commandStatus, name: o.statusName, class: 'retry' })}`, attempts: priorAttempts + o.attempts };
    case 'invalid':
      return { part, kind: 'final', status: 'REJECTED', reason: `not sendable: ${o.reason}`, attempts: priorAttempts };
    case 'internal':
      return { part, kind: 'final', status: 'FAILED', reason: `internal error: ${o.reason}`, attempts: priorAttempts };
    case 'uncertain': {
      // Resent at the next start, as a restart resends what a crash left in flight.
      if (o.why === 'stopped') return { part, kind: 'requeue', notBefore: now };
      const what = o.cause === 'timeout' ? 'no submit_sm_resp in time' : 'the link dropped before the submit_sm_resp';
      return {
        part, kind: 'final', status: 'FAILED', attempts: priorAttempts + o.attempts,
        reason: o.why === 'policy'
          ? `uncertain: ${what} (onUncertain: fail)`
          : `uncertain: ${what} after ${o.attempts} attempts (onUncertain: resend, retry.maxAttempts used up)`,
      };
    }
    case 'unsent':
      // Withdrawn for another upstream: the attempts the SMSC never answered still count.
      if (o.reason === 'withdrawn' && (o.attempts ?? 0) > 0) return { part, kind: 'requeue', notBefore: now, attempts: priorAttempts + (o.attempts ?? 0) };
      return o.reason === 'stopped' || o.reason === 'withdrawn'
        ? { part, kind: 'requeue', notBefore: now }
        : { part, kind: 'final', status: 'FAILED', reason: 'not sent: an earlier part of the message failed', attempts: priorAttempts };
  }
}
