/**
 * Divides each upstream's `accountRate` among the instances that share a store (PostgreSQL): every
 * instance connected to it takes an equal share, and reads how many they are every few seconds, so
 * that one joining or leaving changes the shares within that time. An equal split needs no traffic
 * between instances and never lets them together go over the account's rate (once all have read
 * the same count); its cost is that an idle instance's share goes unused. With a store used by one
 * process (SQLite) the one instance takes all of it.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';

export interface AccountSharesOptions {
  /** The store's count of running instances; absent: one process uses the store. */
  liveInstances: (() => Promise<number>) | undefined;
  /** Gives `upstream`'s pool its share: `accountRate / instances`. */
  setInstances: (upstream: string, instances: number) => void;
  /** The upstreams with an `accountRate`. */
  upstreams: readonly string[];
  clock: Clock;
  log: Log;
  everyMs: number;
}

export class AccountShares {
  readonly #o: AccountSharesOptions;
  readonly #task: RepeatingTask | undefined;
  #instances = 1;

  constructor(o: AccountSharesOptions) {
    this.#o = o;
    const count = o.liveInstances;
    this.#task = count === undefined || o.upstreams.length === 0 ? undefined : new RepeatingTask({
      clock: o.clock, everyMs: o.everyMs,
      run: async () => this.#apply(await count()),
      onError: (e) => o.log.error({ event: 'store_error', err: e }, 'counting the running instances failed; the account shares stay as they are'),
    });
  }

  start(): void {
    this.#task?.start();
  }

  async stop(): Promise<void> {
    await this.#task?.stop();
  }

  #apply(instances: number): void {
    if (instances === this.#instances) return;
    this.#o.log.info({ event: 'account_shares', instances, previous: this.#instances, upstreams: this.#o.upstreams },
      'instances on the store changed: each takes an equal share of accountRate');
    this.#instances = instances;
    for (const u of this.#o.upstreams) this.#o.setInstances(u, instances);
  }
}
