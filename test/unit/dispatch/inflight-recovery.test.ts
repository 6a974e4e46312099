/**
 * Parts another instance left in flight, looked for by the dispatcher on a ManualClock: on a
 * shared store at a period that follows its lease (not once a minute), with this instance's own
 * leases renewed at the same time, and what comes back claimed at once; on a store of one process,
 * never.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Dispatcher, type SubmitTarget } from '../../../src/dispatch/dispatcher.js';
import type { MessageOutcome } from '../../../src/smpp/part-outcome.js';
import type { ClaimedMessage, PartResult, SubmitClaims, TurnsReleased } from '../../../src/store/claims.js';
import { advanceInSteps, promiseTurns } from '../../support/manual-time.js';

/** A store whose queue is empty until an abandoned part is recovered into it. */
class SharedStore implements SubmitClaims {
  readonly calls: Array<{ kind: 'renew' | 'recoverAbandoned' | 'recoverInflight' | 'claim'; at: number; policies?: unknown }> = [];
  abandoned = 0;
  queue: ClaimedMessage[] = [];
  readonly recorded: string[] = [];

  constructor(readonly leaseMs?: number) {}

  renewLeases = async (now: number): Promise<number> => {
    this.calls.push({ kind: 'renew', at: now });
    return 0;
  };

  async recoverAbandoned(policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number> {
    this.calls.push({ kind: 'recoverAbandoned', at: now, policies });
    const n = this.abandoned;
    this.abandoned = 0;
    for (let i = 0; i < n; i++) {
      this.queue.push({ id: `gone-${i}`, client: 'acme', upstream: 'up1', source: 'A', destination: '1', registeredDelivery: 0, sourceTon: 5, sourceNpi: 0, destTon: 1, destNpi: 1, validityPeriod: '', parts: [{ part: 1, attempts: 0, dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('x') }] } as unknown as ClaimedMessage);
    }
    return n;
  }

  async recoverInflight(_policies: Readonly<Record<string, 'resend' | 'fail'>>, now: number): Promise<number> {
    this.calls.push({ kind: 'recoverInflight', at: now });
    return 0;
  }

  async claim(_upstream: string, now: number): Promise<ClaimedMessage[]> {
    this.calls.push({ kind: 'claim', at: now });
    return this.queue.splice(0);
  }

  async recordSubmit(id: string, _results: PartResult[]): Promise<void> {
    this.recorded.push(id);
  }

  releaseDue = async (): Promise<number> => 0;
  releaseTurns = async (): Promise<TurnsReleased> => ({ released: 0, nextAt: null });
  expire = async (): Promise<number> => 0;
}

class AnsweringPool implements SubmitTarget {
  readonly submitted: string[] = [];
  accepting(): boolean {
    return true;
  }

  async submit(): Promise<MessageOutcome> {
    this.submitted.push('x');
    return { parts: [{ kind: 'accepted', messageId: 'S', bind: 'b1', attempts: 1, latencyMs: 1 }] };
  }

  onDrain(): () => void {
    return () => {};
  }
}

async function rig(leaseMs?: number) {
  const clock = new ManualClock(0, 1_000_000);
  const store = new SharedStore(leaseMs);
  const pool = new AnsweringPool();
  // A poll far apart from the lease's period: the claims that follow a recovery come from its wake-up.
  const dispatcher = new Dispatcher({ store, pool, clock, log: silentLog, upstreams: [{ name: 'up1', maxInPool: 10, onUncertain: 'fail' }], pollMs: 60_000 });
  await dispatcher.start();
  await promiseTurns();
  const advance = (ms: number) => advanceInSteps(clock, ms);
  const times = (kind: string) => store.calls.filter((c) => c.kind === kind).map((c) => c.at - 1_000_000);
  return { clock, store, pool, dispatcher, advance, times };
}

describe('Dispatcher: parts of an instance that is gone', () => {
  it('on a shared store, looks for them and renews this instance\'s leases every quarter of the lease, by each upstream\'s onUncertain', async () => {
    const { store, dispatcher, advance, times } = await rig(4_000);
    expect(times('recoverInflight')).toEqual([0]);
    await advance(3_500);
    expect(times('recoverAbandoned')).toEqual([1_000, 2_000, 3_000]);
    expect(times('renew')).toEqual(times('recoverAbandoned'));
    expect(store.calls.find((c) => c.kind === 'recoverAbandoned')?.policies).toEqual({ up1: 'fail' });
    await dispatcher.stop();
    await advance(3_000);
    expect(times('recoverAbandoned')).toHaveLength(3);
  });

  it('claims what it recovered at once, not at the next poll', async () => {
    const { store, pool, dispatcher, advance, times } = await rig(4_000);
    expect(times('claim')).toEqual([0]);
    store.abandoned = 2;
    await advance(1_000);
    // At the recovery's time, 59 s before the next poll.
    expect(times('recoverAbandoned')).toEqual([1_000]);
    expect(times('claim')[1]).toBe(1_000);
    expect(pool.submitted).toHaveLength(2);
    await promiseTurns();
    expect(store.recorded).toEqual(['gone-0', 'gone-1']);
    await dispatcher.stop();
  });

  it('on a store of one process (no lease), never looks', async () => {
    const { dispatcher, advance, times } = await rig(undefined);
    await advance(5_000);
    expect(times('recoverAbandoned')).toEqual([]);
    expect(times('renew')).toEqual([]);
    await dispatcher.stop();
  });
});
