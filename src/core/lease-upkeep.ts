/**
 * The upkeep of an instance's leases on a store that several instances share: now and then it
 * renews the leases of what this instance holds and takes over what instances that are gone
 * left behind. How often follows the lease: a crashed instance's work waits for its lease to end
 * and then at most one period, so takeover comes within the lease plus `LEASE_UPKEEP_MAX_MS`.
 */
import type { Clock } from './clock.js';
import { RepeatingTask } from './repeating-task.js';

const LEASE_UPKEEP_MIN_MS = 250;
/** The longest period, whatever the lease: the most a takeover waits past the end of a lease. */
export const LEASE_UPKEEP_MAX_MS = 2_000;

/**
 * A quarter of the lease, within 250 ms – 2 s. A renewal extends the leases that end within half a
 * lease, so a live instance's leases keep at least a quarter of a lease ahead of them between
 * renewals, however slow its store is.
 */
export function leaseUpkeepEveryMs(leaseMs: number): number {
  return Math.min(LEASE_UPKEEP_MAX_MS, Math.max(LEASE_UPKEEP_MIN_MS, Math.floor(leaseMs / 4)));
}

export interface LeaseUpkeepOptions {
  clock: Clock;
  /** The store's lease (ms, > 0): sets the period (`leaseUpkeepEveryMs`). */
  leaseMs: number;
  /** Extends this instance's leases (at wall time `now`). */
  renew: (now: number) => Promise<unknown>;
  /** Takes over what instances that are gone hold (at wall time `now`); resolves with how many. */
  takeOver: (now: number) => Promise<number>;
  /** Something was taken over: there is work to do now. */
  onTakenOver: (count: number) => void;
  /** A renewal or a takeover failed; the next period tries again. */
  onError: (e: unknown) => void;
}

export class LeaseUpkeep {
  readonly everyMs: number;
  readonly #task: RepeatingTask;

  constructor(o: LeaseUpkeepOptions) {
    this.everyMs = leaseUpkeepEveryMs(o.leaseMs);
    this.#task = new RepeatingTask({
      clock: o.clock, everyMs: this.everyMs, onError: o.onError,
      run: async () => {
        const now = o.clock.wallNow();
        const [renewed, taken] = await Promise.allSettled([o.renew(now), o.takeOver(now)]);
        if (renewed.status === 'rejected') o.onError(renewed.reason);
        if (taken.status === 'rejected') o.onError(taken.reason);
        else if (taken.value > 0) o.onTakenOver(taken.value);
      },
    });
  }

  /** The first run now (`firstNow`) or after one period, then one every period after each. */
  start(firstNow = false): void {
    this.#task.start(firstNow ? undefined : this.everyMs);
  }

  /** No more runs; resolves when the one under way (if any) is over. */
  stop(): Promise<void> {
    return this.#task.stop();
  }
}
