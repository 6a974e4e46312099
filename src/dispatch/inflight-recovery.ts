/**
 * Parts left in flight without an outcome go back to the queue or fail, by their upstream's
 * `onUncertain`: this instance's own once at start (what its last run left), and, on a store
 * that several instances share, those of instances that are gone, looked for while it runs.
 * The look follows the store's lease (`LeaseUpkeep`): a crashed instance's parts are taken over
 * within the lease and a period of at most 2 s, and the same upkeep renews this instance's own
 * leases so that the others never take over a live instance's parts.
 */
import type { Clock } from '../core/clock.js';
import { LeaseUpkeep } from '../core/lease-upkeep.js';
import type { Log } from '../core/log.js';
import type { SubmitClaims } from '../store/claims.js';

export type UncertainPolicies = Readonly<Record<string, 'resend' | 'fail'>>;

export interface InflightRecoveryOptions {
  store: SubmitClaims;
  clock: Clock;
  log: Log;
  /** Each upstream's `onUncertain`, read at each recovery. */
  policies: () => UncertainPolicies;
  /** Parts of a gone instance went back to the queue: claim them now. */
  onRecovered: () => void;
}

export class InflightRecovery {
  readonly #o: InflightRecoveryOptions;
  readonly #upkeep: LeaseUpkeep | undefined;

  constructor(o: InflightRecoveryOptions) {
    this.#o = o;
    const { store, clock, log } = o;
    // No lease: one process uses the store, and nobody else leaves parts in it.
    this.#upkeep = store.leaseMs === undefined ? undefined : new LeaseUpkeep({
      clock, leaseMs: store.leaseMs,
      renew: (now) => store.renewLeases?.(now) ?? Promise.resolve(0),
      takeOver: (now) => store.recoverAbandoned(o.policies(), now),
      onTakenOver: (parts) => {
        log.warn({ event: 'recovered_abandoned', parts }, 'parts another instance left in flight were requeued or failed per onUncertain');
        o.onRecovered();
      },
      onError: (e) => log.error({ event: 'store_error', err: e }, 'renewing this instance\'s leases or recovering abandoned parts failed'),
    });
  }

  /** Recovers what this instance's last run left in flight, then starts looking for gone instances' parts. */
  async start(): Promise<void> {
    const { store, clock, log } = this.#o;
    const recovered = await store.recoverInflight(this.#o.policies(), clock.wallNow());
    if (recovered > 0) log.warn({ event: 'recovered_inflight', parts: recovered }, 'parts left in flight by the last run were requeued or failed per onUncertain');
    this.#upkeep?.start();
  }

  /** No more renewals or recoveries; resolves when the one under way (if any) is over. */
  async stop(): Promise<void> {
    await this.#upkeep?.stop();
  }
}
