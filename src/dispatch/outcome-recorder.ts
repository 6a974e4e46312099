/**
 * What the dispatcher hands the pool for a claimed message (its submit_sm parts) and how it
 * stores what the pool made of them: each accepted part but the last as soon as it is accepted
 * (the pool keeps its window slot until then, so a crash cannot send it again), the rest with
 * the message's outcome.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import type { WarningThrottle } from '../core/warning-throttle.js';
import type { PartOutcome, StorePart, SubmitPart } from '../smpp/part-outcome.js';
import type { ClaimedMessage, SubmitClaims } from '../store/claims.js';
import { buildSubmitSm } from './compose.js';
import { partResult } from './part-result.js';

/** The recording of one message handed to the pool. */
export interface MessageRecording {
  /** For the pool's `submit`: stores an accepted part of the message that has more to send. */
  storePart: StorePart;
  /** Stores the outcome of every part `storePart` has not stored. */
  record(outcomes: PartOutcome[]): Promise<void>;
}

export class OutcomeRecorder {
  constructor(
    private readonly store: Pick<SubmitClaims, 'recordSubmit'>,
    private readonly clock: Clock,
    private readonly log: Log,
    /** Says once per interval that resends of unanswered parts ran out; its owner closes it. */
    private readonly warnings: WarningThrottle,
  ) {}

  of(m: ClaimedMessage): MessageRecording {
    const stored = new Set<number>();
    return {
      storePart: async (index, accepted) => {
        const now = this.clock.wallNow();
        try {
          await this.store.recordSubmit(m.id, [partResult(m.parts[index]!.part, priorAttempts(m, index), accepted, now)], now);
          stored.add(index);
        } catch (e) {
          // The message's outcome records it again.
          this.log.error({ event: 'store_error', messageId: m.id, part: m.parts[index]!.part, err: e }, 'recording an accepted part failed');
        }
      },
      record: (outcomes) => this.#record(m, outcomes, stored),
    };
  }

  #record(m: ClaimedMessage, outcomes: PartOutcome[], stored: ReadonlySet<number>): Promise<void> {
    const now = this.clock.wallNow();
    const results = m.parts.flatMap((p, i) => (stored.has(i) ? [] : [partResult(p.part, priorAttempts(m, i), outcomes[i], now)]));
    m.parts.forEach((p, i) => {
      const o = outcomes[i];
      if (o?.kind !== 'uncertain' || o.why !== 'attempts') return;
      // The SMSC answered none of the attempts: a line naming the part, once per interval (with a
      // count of the others) when the SMSC stops answering altogether.
      this.warnings.warn(this.log, `uncertain_resend_exhausted@${m.upstream}`, {
        event: 'uncertain_resend_exhausted', upstream: m.upstream, messageId: m.id, part: p.part, cause: o.cause, attempts: o.attempts,
      }, 'onUncertain: resend ran out of attempts; the part is FAILED');
    });
    return this.store.recordSubmit(m.id, results, now);
  }
}

/** The submit_sm of each claimed part, in order. */
export function submitParts(m: ClaimedMessage): SubmitPart[] {
  return m.parts.map((p) => buildSubmitSm({
    source: m.source, sourceTon: m.sourceTon, sourceNpi: m.sourceNpi,
    destination: m.destination, destTon: m.destTon, destNpi: m.destNpi,
    registeredDelivery: m.registeredDelivery, validityPeriod: m.validityPeriod,
    ...(m.vendorTlvs !== undefined ? { vendorTlvs: m.vendorTlvs } : {}),
  }, p));
}

/** The attempts a part had before this claim, beyond those in its outcome: the first part's are in it already (`submit`'s priorAttempts). */
function priorAttempts(m: ClaimedMessage, index: number): number {
  return index === 0 ? 0 : m.parts[index]!.attempts;
}
