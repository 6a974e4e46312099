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

/** Which of the behaviour's two rate limits a throttle follows. */
export type ThrottleScope = 'bind' | 'account';

/**
 * The SMSC side of a rate limit: a token bucket that follows the behaviour's throttle for one
 * scope, made on first use and given the new rate and burst when the behaviour changes. One per
 * connection for 'bind'; one per system_id, shared by all of its binds, for 'account'.
 */
export class SubmitThrottle {
  #bucket: TokenBucket | undefined;
  #version = -1;

  constructor(readonly scope: ThrottleScope) {}

  /** The bucket at `now`; undefined while the behaviour sets no limit for this scope. */
  bucket(b: CompiledBehaviour, now: number): TokenBucket | undefined {
    const bind = this.scope === 'bind';
    const rate = bind ? b.spec.throttleRatePerBind : b.spec.throttleRatePerAccount;
    if (rate === 0) return undefined;
    const burst = Math.max(1, bind ? b.throttleBurst : b.throttleAccountBurst);
    if (!this.#bucket) {
      this.#bucket = new TokenBucket(rate, burst, now);
    } else if (this.#version !== b.version) {
      // Keeps the tokens saved so far (capped at the new burst): a change does not refill.
      this.#bucket.setLimits(rate, burst, now);
    }
    this.#version = b.version;
    return this.#bucket;
  }

  /** Forgets the saved tokens: the next submit_sm finds a full burst. */
  reset(): void {
    this.#bucket = undefined;
  }
}

/**
 * The checks a submit_sm passes before the behaviour picks its status, in the order an SMSC makes
 * them: the bind may submit, the addresses fit, then the behaviour's odds of a generic_nack and the
 * rate limits of the bind and of its account. One per bound connection: it holds the bind's
 * throttle and shares its account's with the account's other binds.
 */
export class SubmitChecks {
  readonly #bind = new SubmitThrottle('bind');
  readonly #account: SubmitThrottle | undefined;

  /** `account`: the throttle of the bind's system_id; none before the bind. */
  constructor(account?: SubmitThrottle) {
    this.#account = account;
  }

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
    if (!this.#takeTokens(b, now)) return SimStatus.ESME_RTHROTTLED;
    return 0;
  }

  /**
   * A submit_sm passes with a token from its bind's bucket and one from its account's, or takes
   * none: the account's is looked at first without taking it, then the bind's is taken, then the
   * account's. So a submit_sm refused by either limit costs the other nothing, and one bind
   * refused by its own limit does not eat into what its account's other binds may send.
   */
  #takeTokens(b: CompiledBehaviour, now: number): boolean {
    const account = this.#account?.bucket(b, now);
    if (account && account.available(now) < 1) return false;
    const bind = this.#bind.bucket(b, now);
    if (bind && bind.take(1, now) > 0) return false;
    account?.take(1, now); // succeeds: the same `now` as the look above
    return true;
  }
}
