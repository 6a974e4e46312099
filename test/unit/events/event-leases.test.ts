/**
 * The events another instance had claimed when it died, on a ManualClock: on a shared store the
 * webhook dispatcher looks for them (and renews its own event leases) at a period that follows the
 * store's lease, from its start on, and claims what it took over at once; on a store of one
 * process, or without clients, it never looks.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { EventDispatcher, type EventClient } from '../../../src/events/event-dispatcher.js';
import type { EventOutbox, OutboxEvent } from '../../../src/store/outbox.js';
import { advanceInSteps, promiseTurns } from '../../support/manual-time.js';

class SharedOutbox implements EventOutbox {
  readonly calls: Array<{ kind: 'renew' | 'recover' | 'claim'; at: number }> = [];
  abandoned = 0;

  constructor(readonly leaseMs?: number) {}

  async claimEvents(_client: string, now: number): Promise<OutboxEvent[]> {
    this.calls.push({ kind: 'claim', at: now });
    return [];
  }

  settleEvents = async () => ({ superseded: 0 });
  outboxDepth = async () => [];

  renewEventLeases = async (now: number): Promise<number> => {
    this.calls.push({ kind: 'renew', at: now });
    return 0;
  };

  recoverAbandonedEvents = async (now: number): Promise<number> => {
    this.calls.push({ kind: 'recover', at: now });
    const n = this.abandoned;
    this.abandoned = 0;
    return n;
  };
}

const client: EventClient = {
  name: 'acme', concurrency: 1, retry: { initialMs: 1_000, maxMs: 8_000, multiplier: 2 }, maxAgeMs: 60_000, leaseMs: 60_000,
  sink: { origin: 'http://hook.test', post: async () => ({ ok: true, status: 200, ms: 1 }), close: async () => {} },
};

async function rig(leaseMs: number | undefined, clients = [client]) {
  const clock = new ManualClock(0, 1_000_000);
  const store = new SharedOutbox(leaseMs);
  // A poll far apart from the lease's period: a claim right after a takeover comes from its wake-up.
  const dispatcher = new EventDispatcher({ store, clock, log: silentLog, clients, pollMs: 60_000 });
  dispatcher.start();
  await promiseTurns();
  const advance = (ms: number) => advanceInSteps(clock, ms);
  const times = (kind: string) => store.calls.filter((c) => c.kind === kind).map((c) => c.at - 1_000_000);
  return { store, dispatcher, advance, times };
}

describe('EventDispatcher: events of an instance that is gone', () => {
  it('on a shared store, looks for them and renews its own at start and every quarter of the lease', async () => {
    const { dispatcher, advance, times } = await rig(3_000);
    await advance(2_400);
    expect(times('recover')).toEqual([0, 750, 1_500, 2_250]);
    expect(times('renew')).toEqual(times('recover'));
    await dispatcher.stop();
    await advance(2_000);
    expect(times('recover')).toHaveLength(4);
  });

  it('claims the events it took over at once, not at the next poll', async () => {
    const { store, dispatcher, advance, times } = await rig(3_000);
    await advance(100);
    expect(times('claim')).toEqual([0]);
    store.abandoned = 5;
    await advance(700);
    expect(times('claim')).toEqual([0, 750]);
    await dispatcher.stop();
  });

  it('never looks on a store of one process, nor without clients', async () => {
    for (const { dispatcher, advance, times } of [await rig(undefined), await rig(3_000, [])]) {
      await advance(3_000);
      expect(times('recover')).toEqual([]);
      expect(times('renew')).toEqual([]);
      await dispatcher.stop();
    }
  });
});
