import type { Clock, TimerHandle } from '../core/clock.js';
import { Pacer } from './pacer.js';
import type { Learned, RateControlSettings } from './rate-controller.js';

/** A throttle counts against the account when its pacing held the upstream back this recently (ms). */
const LIMITING_MS = 250;

export interface AccountPaceStats {
  /** The account's share of `accountRate` this instance may use (submit_sm/s). */
  share: number;
  /** The rate in force: the share, or less once the SMSC was measured below it. */
  rate: number;
  learnedLimit: number | null;
  throttleEpisodes: number;
}

/** What the account tells the bind a throttle answer came on. */
interface ThrottledBind {
  onThrottled(measure: boolean): boolean;
}

/**
 * One upstream's `accountRate`: a `Pacer` every bind of the upstream takes a token from besides
 * its own, at the rate the SMSC is found to accept for the whole account. A throttle answer is
 * measured by the account when the account's pacing is what held the upstream back (it ran out of
 * tokens within the last 250 ms, or is measuring), by the bind it came on otherwise: it is charged
 * to whichever limit the senders were running into.
 */
export class AccountPace {
  #share: number;
  #pacer: Pacer;
  #limitingAt = -Infinity;
  #wake: TimerHandle | undefined;

  constructor(
    /** submit_sm/s for the account, across every instance. */
    private readonly accountRate: number,
    private readonly throttle: Omit<RateControlSettings, 'maxRate'>,
    private readonly clock: Clock,
    private readonly learned: (learned: Learned | undefined) => void,
    /** Called when a token the senders waited for is due. */
    private readonly ready: () => void,
  ) {
    this.#share = accountRate;
    this.#pacer = this.#newPacer(accountRate);
  }

  /**
   * Divides the account among `instances` running smppd instances (each takes an equal share);
   * what was learned is kept, scaled to the new share.
   */
  setInstances(instances: number): void {
    const share = this.accountRate / Math.max(1, instances);
    if (share === this.#share) return;
    const learned = this.#pacer.limit;
    const scale = share / this.#share;
    this.#share = share;
    this.#pacer = this.#newPacer(share);
    if (learned !== undefined) this.#pacer.resume(learned * scale, this.clock.now());
  }

  /** Takes a token of the account's for one submit_sm; without one, `ready` is called when it is due. */
  readonly admit = (): boolean => {
    const now = this.clock.now();
    const wait = this.#pacer.wait(now);
    if (wait === 0) {
      this.#pacer.take(now);
      return true;
    }
    this.#limitingAt = now;
    this.#wake ??= this.clock.setTimer(wait, () => {
      this.#wake = undefined;
      this.ready();
    });
    return false;
  };

  onAccepted(): void {
    this.#pacer.onAccepted(this.clock.now());
  }

  /**
   * A throttle answer on `bind`: when the account was what held the upstream back, the account
   * measures it (the bind only counts it) and this returns 'account' or, on a new measurement,
   * 'account-episode'; otherwise undefined, and the bind's own pacing is the one to tell.
   */
  throttled(bind: ThrottledBind): 'account' | 'account-episode' | undefined {
    const now = this.clock.now();
    if (!this.#pacer.measuring && now - this.#limitingAt > LIMITING_MS) return undefined;
    bind.onThrottled(false);
    return this.#pacer.onThrottled(now) ? 'account-episode' : 'account';
  }

  stats(): AccountPaceStats {
    const now = this.clock.now();
    return { share: this.#share, rate: this.#pacer.rate(now), learnedLimit: this.#pacer.limit ?? null, throttleEpisodes: this.#pacer.episodes };
  }

  stop(): void {
    this.#wake?.cancel();
    this.#wake = undefined;
  }

  #newPacer(share: number): Pacer {
    return new Pacer({ ...this.throttle, maxRate: share }, Math.max(1, Math.ceil(share / 50)), this.clock.now(), this.learned);
  }
}
