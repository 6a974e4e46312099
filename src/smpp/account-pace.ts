import type { Clock, TimerHandle } from '../core/clock.js';
import { Pacer } from './pacer.js';
import type { Learned, RateControlSettings } from './rate-controller.js';

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
 * its own, at the rate the SMSC is found to accept for the whole account. An upstream with an
 * account rate says its provider limits the account: every throttle answer on any of its binds is
 * measured by the account (the bind only counts it), so the binds together settle just below the
 * account's limit instead of each guessing its share. A provider that limits each bind as well is
 * followed too, as long as the binds carry about equal loads (the pool spreads submits evenly).
 */
export class AccountPace {
  #share: number;
  #pacer: Pacer;
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
    this.#wake ??= this.clock.setTimer(wait, () => {
      this.#wake = undefined;
      this.ready();
    });
    return false;
  };

  onAccepted(): void {
    this.#pacer.onAccepted(this.clock.now());
  }

  /** A throttle answer on `bind`: the account measures it, the bind counts it. True when it started a measurement. */
  throttled(bind: ThrottledBind): boolean {
    bind.onThrottled(false);
    return this.#pacer.onThrottled(this.clock.now());
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
