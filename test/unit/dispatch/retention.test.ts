import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { RETENTION_BATCH, RETENTION_SWEEP_EVERY_MS, RetentionSweep, type PrunedKind } from '../../../src/dispatch/retention.js';
import type { PruneCounts, PruneCursor } from '../../../src/store/retention.js';
import { recordingLog } from '../../support/http.js';

const DAY = 86_400_000;

/** Lets the sweep's promise chain run (the fake store answers at once). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Call { before: number; limit: number; after: PruneCursor | null }

/** A store with no idempotency key to sweep. */
const noKeys = { pruneIdempotencyKeys: () => Promise.resolve(0) };

/** A store whose sweeps answer from `script`, one sweep after the other; each sweep a list of call answers. */
function fakeStore(script: Array<Array<Omit<PruneCounts, 'next'> & { more: boolean }>>) {
  const calls: Call[] = [];
  let sweep = 0;
  let call = 0;
  return {
    calls,
    ...noKeys,
    async pruneFinished(before: number, limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
      calls.push({ before, limit, after: after ?? null });
      const answers = script[Math.min(sweep, script.length - 1)] ?? [];
      const { more, ...counts } = answers[call] ?? { messages: 0, batches: 0, inbound: 0, more: false };
      call++;
      if (!more) { sweep++; call = 0; }
      return { ...counts, next: more ? { table: 'messages', at: 1, id: call } : null };
    },
  };
}

describe('RetentionSweep', () => {
  it('sweeps at start with the cutoff now − retentionDays, calling again with the cursor until the store has looked at everything', async () => {
    const clock = new ManualClock();
    const store = fakeStore([[
      { messages: 1_000, batches: 0, inbound: 0, more: true },
      { messages: 400, batches: 3, inbound: 0, more: true },
      { messages: 0, batches: 2, inbound: 7, more: false },
    ]]);
    const lines: string[] = [];
    const pruned: Array<[PrunedKind, number]> = [];
    const sweep = new RetentionSweep({
      store, clock, log: recordingLog(lines), retentionDays: 30, metrics: { storePruned: (kind, n) => pruned.push([kind, n]) },
    });
    sweep.start();
    await settle();
    const cutoff = clock.wallNow() - 30 * DAY;
    expect(store.calls).toEqual([
      { before: cutoff, limit: RETENTION_BATCH, after: null },
      { before: cutoff, limit: RETENTION_BATCH, after: { table: 'messages', at: 1, id: 1 } },
      { before: cutoff, limit: RETENTION_BATCH, after: { table: 'messages', at: 1, id: 2 } },
    ]);
    expect(pruned).toEqual([['message', 1_000], ['message', 400], ['batch', 3], ['batch', 2], ['inbound', 7]]);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({
      level: 'info', event: 'retention_sweep', messages: 1_400, batches: 5, inbound: 7, cutoff: new Date(cutoff).toISOString(), retentionDays: 30,
    })]);
    await sweep.stop();
  });

  it('sweeps again every RETENTION_SWEEP_EVERY_MS after the last one ended, and logs only a sweep that deleted something', async () => {
    const clock = new ManualClock();
    const store = fakeStore([[{ messages: 0, batches: 0, inbound: 0, more: false }]]);
    const lines: string[] = [];
    const sweep = new RetentionSweep({ store, clock, log: recordingLog(lines), retentionDays: 7 });
    sweep.start();
    await settle();
    expect(store.calls).toHaveLength(1);
    clock.advance(RETENTION_SWEEP_EVERY_MS - 1);
    await settle();
    expect(store.calls).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(store.calls).toHaveLength(2);
    expect(store.calls[1]).toEqual({ before: clock.wallNow() - 7 * DAY, limit: RETENTION_BATCH, after: null });
    clock.advance(RETENTION_SWEEP_EVERY_MS);
    await settle();
    expect(store.calls).toHaveLength(3);
    expect(lines).toEqual([]);
    await sweep.stop();
    clock.advance(10 * RETENTION_SWEEP_EVERY_MS);
    await settle();
    expect(store.calls).toHaveLength(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it('a failing store call ends that sweep with one error line; the next period sweeps again from the start', async () => {
    const clock = new ManualClock();
    let fail = true;
    const calls: Array<PruneCursor | null> = [];
    const store = {
      ...noKeys,
      async pruneFinished(_before: number, _limit: number, after?: PruneCursor | null): Promise<PruneCounts> {
        calls.push(after ?? null);
        if (fail) throw new Error('disk I/O error');
        return { messages: 1, batches: 0, inbound: 0, next: null };
      },
    };
    const lines: string[] = [];
    const sweep = new RetentionSweep({ store, clock, log: recordingLog(lines), retentionDays: 30 });
    sweep.start();
    await settle();
    expect(lines.map((l) => (JSON.parse(l) as { level: string; event: string }).event)).toEqual(['store_error']);
    fail = false;
    clock.advance(RETENTION_SWEEP_EVERY_MS);
    await settle();
    expect(calls).toEqual([null, null]);
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(['store_error', 'retention_sweep']);
    await sweep.stop();
  });

  it('stop waits for the call under way and makes no more', async () => {
    const clock = new ManualClock();
    let release: (() => void) | undefined;
    let calls = 0;
    const store = {
      ...noKeys,
      pruneFinished(): Promise<PruneCounts> {
        calls++;
        return new Promise((resolve) => { release = () => resolve({ messages: 0, batches: 0, inbound: 0, next: { table: 'messages', at: 1, id: 1 } }); });
      },
    };
    const sweep = new RetentionSweep({ store, clock, log: recordingLog([]), retentionDays: 30 });
    sweep.start();
    let stopped = false;
    const stopping = sweep.stop().then(() => { stopped = true; });
    await settle();
    expect(stopped).toBe(false);
    release?.();
    await stopping;
    expect(calls).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits as long as each call took before the next, so a long sweep leaves the store half its time; stop ends the wait', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const store = {
      ...noKeys,
      pruneFinished(): Promise<PruneCounts> {
        calls++;
        clock.advance(30); // the call took 30 ms
        return Promise.resolve({ messages: 1_000, batches: 0, inbound: 0, next: { table: 'messages', at: 1, id: calls } });
      },
    };
    const sweep = new RetentionSweep({ store, clock, log: recordingLog([]), retentionDays: 30 });
    sweep.start();
    await settle();
    expect(calls).toBe(1);
    clock.advance(29);
    await settle();
    expect(calls).toBe(1);
    clock.advance(1);
    await settle();
    expect(calls).toBe(2);
    await sweep.stop();
    expect(calls).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it('then deletes the expired idempotency keys, a batch a call, until a call deletes fewer', async () => {
    const clock = new ManualClock();
    const keyCalls: Array<[number, number]> = [];
    const answers = [RETENTION_BATCH, RETENTION_BATCH, 12];
    const store = {
      ...fakeStore([[{ messages: 0, batches: 0, inbound: 0, more: false }]]),
      pruneIdempotencyKeys(now: number, limit: number): Promise<number> {
        keyCalls.push([now, limit]);
        return Promise.resolve(answers[keyCalls.length - 1] ?? 0);
      },
    };
    const pruned: Array<[PrunedKind, number]> = [];
    const lines: string[] = [];
    const sweep = new RetentionSweep({ store, clock, log: recordingLog(lines), retentionDays: 30, metrics: { storePruned: (kind, n) => pruned.push([kind, n]) } });
    sweep.start();
    await settle();
    expect(keyCalls).toEqual([[clock.wallNow(), RETENTION_BATCH], [clock.wallNow(), RETENTION_BATCH], [clock.wallNow(), RETENTION_BATCH]]);
    expect(pruned).toEqual([['idempotency_key', RETENTION_BATCH], ['idempotency_key', RETENTION_BATCH], ['idempotency_key', 12]]);
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([expect.objectContaining({ event: 'retention_sweep', idempotencyKeys: 2 * RETENTION_BATCH + 12 })]);
    await sweep.stop();
  });

  it('refuses retentionDays 0: keeping everything means building no sweep', () => {
    expect(() => new RetentionSweep({ store: fakeStore([]), clock: new ManualClock(), log: recordingLog([]), retentionDays: 0 })).toThrow(RangeError);
  });
});
