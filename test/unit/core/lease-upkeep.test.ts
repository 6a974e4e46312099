/**
 * The upkeep of a shared store's leases on a ManualClock: its period follows the lease (a quarter,
 * 250 ms – 2 s), each run renews and takes over, and what was taken over is reported.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { LEASE_UPKEEP_MAX_MS, LeaseUpkeep, leaseUpkeepEveryMs } from '../../../src/core/lease-upkeep.js';
import { advanceInSteps, promiseTurns } from '../../support/manual-time.js';

function setup(leaseMs: number, taken: () => number = () => 0) {
  const clock = new ManualClock(0, 1_000_000);
  const renewals: number[] = [];
  const takeovers: number[] = [];
  const reported: number[] = [];
  const errors: unknown[] = [];
  let failRenew = false;
  const upkeep = new LeaseUpkeep({
    clock, leaseMs,
    renew: async (now) => {
      renewals.push(now);
      if (failRenew) throw new Error('renew failed');
      return 0;
    },
    takeOver: async (now) => {
      takeovers.push(now);
      return taken();
    },
    onTakenOver: (n) => reported.push(n),
    onError: (e) => errors.push(e),
  });
  const advance = (ms: number, step = 50) => advanceInSteps(clock, ms, step);
  return { clock, upkeep, renewals, takeovers, reported, errors, advance, failRenews: () => { failRenew = true; } };
}

describe('LeaseUpkeep', () => {
  it('runs every quarter of the lease, at least every 2 s and at most every 250 ms', () => {
    expect(leaseUpkeepEveryMs(3_000)).toBe(750);
    expect(leaseUpkeepEveryMs(5_000)).toBe(1_250);
    expect(leaseUpkeepEveryMs(300_000)).toBe(LEASE_UPKEEP_MAX_MS);
    expect(leaseUpkeepEveryMs(1_000)).toBe(250);
    expect(leaseUpkeepEveryMs(400)).toBe(250);
  });

  it('renews and takes over at wall time once a period, the first after one period', async () => {
    const { upkeep, renewals, takeovers, advance } = setup(3_000);
    upkeep.start();
    await advance(700);
    expect(renewals).toEqual([]);
    await advance(1_600);
    expect(renewals).toEqual([1_000_750, 1_001_500, 1_002_250]);
    expect(takeovers).toEqual(renewals);
    await upkeep.stop();
    await advance(3_000);
    expect(renewals).toHaveLength(3);
  });

  it('with a lease of 5 minutes, still looks every 2 s: a takeover waits at most 2 s past a lease', async () => {
    const { upkeep, takeovers, advance } = setup(300_000);
    upkeep.start(true);
    await promiseTurns();
    await advance(10_000, 10);
    expect(takeovers).toEqual([0, 2_000, 4_000, 6_000, 8_000, 10_000].map((t) => 1_000_000 + t));
    await upkeep.stop();
  });

  it('reports what it took over, and goes on after a failed renewal', async () => {
    let n = 0;
    const { upkeep, reported, errors, advance, failRenews } = setup(4_000, () => [0, 3, 0, 2][n++] ?? 0);
    upkeep.start();
    await advance(2_000);
    expect(reported).toEqual([3]);
    failRenews();
    await advance(2_000);
    expect(reported).toEqual([3, 2]);
    expect(errors).toEqual([new Error('renew failed'), new Error('renew failed')]);
    await upkeep.stop();
  });
});
