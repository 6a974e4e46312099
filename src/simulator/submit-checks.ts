import { TokenBucket } from '../core/token-bucket.js';
import type { SubmitSmPdu } from '../smpp/pdu.js';
import type { CompiledBehaviour } from './behaviour.js';
import { SimStatus } from './command-status.js';
import type { BindMode } from './counters.js';

/**
 * SMPP v3.4 §4.4.1: source_addr and destination_addr hold at most 20 characters (21 octets with
 * the NUL). Longer ones are refused as an SMSC would, so a receipt, which carries them back,
 * never breaks the limit either.
 */
const ADDRESS_MAX = 20;

/**
 * The checks a submit_sm passes before the behaviour picks its status, in the order an SMSC makes
 * them: the bind may submit, the addresses fit, then the behaviour's odds of a generic_nack and the
 * per-bind rate limit. One per connection: it holds the bind's token bucket.
 */
export class SubmitChecks {
  /** The SMSC side of a per-bind rate limit: a submit_sm that finds no token is answered ESME_RTHROTTLED. */
  #throttle: TokenBucket | undefined;
  #throttleVersion = -1;

  /**
   * The command_status that refuses `pdu`; 'generic_nack' when it is answered with a generic_nack
   * (ESME_RSYSERR) instead of a submit_sm_resp; 0 when it passes. Draws on `random` only for the
   * generic_nack odds, and only when they are above 0.
   */
  refusal(pdu: SubmitSmPdu, mode: BindMode | undefined, b: CompiledBehaviour, random: () => number, now: number): number | 'generic_nack' {
    const spec = b.spec;
    if (mode === 'receiver') return SimStatus.ESME_RINVBNDSTS;
    if (pdu.sourceAddr.length > ADDRESS_MAX) return SimStatus.ESME_RINVSRCADR;
    if (pdu.destinationAddr.length > ADDRESS_MAX) return SimStatus.ESME_RINVDSTADR;
    if (spec.genericNackProbability > 0 && random() < spec.genericNackProbability) return 'generic_nack';
    if (spec.throttleRatePerBind > 0 && this.#throttleFor(b, now).take(1, now) > 0) return SimStatus.ESME_RTHROTTLED;
    return 0;
  }

  #throttleFor(b: CompiledBehaviour, now: number): TokenBucket {
    const burst = Math.max(1, b.throttleBurst);
    if (!this.#throttle) {
      this.#throttle = new TokenBucket(b.spec.throttleRatePerBind, burst, now);
    } else if (this.#throttleVersion !== b.version) {
      // Keeps the tokens saved so far (capped at the new burst): a change does not refill.
      this.#throttle.setLimits(b.spec.throttleRatePerBind, burst, now);
    }
    this.#throttleVersion = b.version;
    return this.#throttle;
  }
}
