/**
 * The 429 decision's reading of the queue depth: read again every 250 ms near the limit, every
 * second far below it, never on every request, and once for many requests that come together.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError, ErrorCode } from '../../../src/core/errors.js';
import { Acceptor, DEPTH_REFRESH_FAR_MS, DEPTH_REFRESH_MS } from '../../../src/dispatch/accept.js';
import type { Store } from '../../../src/store/store.js';

const COMPOSE = { defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true } as const;

function acceptorWithDepth(maxQueued: number, read: (value: number) => Promise<number> = (value) => Promise.resolve(value)) {
  const clock = new ManualClock();
  const depth = { value: 0, reads: 0 };
  const store = { queueDepth: async () => { depth.reads++; return { queued: await read(depth.value), byClient: [] }; } } as unknown as Store;
  const acceptor = new Acceptor({ store, clock, upstreams: [{ name: 'up1', compose: COMPOSE }], maxQueued });
  const refused = async () => acceptor.checkCapacity().then(() => false, (e: unknown) => {
    if (isSmppdError(e, ErrorCode.QUEUE_FULL)) return true;
    throw e;
  });
  return { clock, depth, refused };
}

describe('Acceptor capacity check', () => {
  it('far below the limit reads the depth once a second, whatever the number of requests', async () => {
    const { clock, depth, refused } = acceptorWithDepth(1_000);
    depth.value = 499;
    expect(await refused()).toBe(false);
    for (let i = 0; i < 10; i++) expect(await refused()).toBe(false);
    clock.advance(DEPTH_REFRESH_FAR_MS - 1);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(1);
    clock.advance(1);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(2);
  });

  it('from half the limit on reads it every 250 ms, and refuses from the limit until a reading is below it', async () => {
    const { clock, depth, refused } = acceptorWithDepth(1_000);
    depth.value = 500;
    expect(await refused()).toBe(false);
    depth.value = 1_000;
    clock.advance(DEPTH_REFRESH_MS - 1);
    expect(await refused()).toBe(false);
    clock.advance(1);
    expect(await refused()).toBe(true);
    expect(depth.reads).toBe(2);
    depth.value = 999;
    expect(await refused()).toBe(true);
    clock.advance(DEPTH_REFRESH_MS);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(3);
  });

  it('a reading that fell below half the limit waits a second for the next', async () => {
    const { clock, depth, refused } = acceptorWithDepth(1_000);
    depth.value = 800;
    await refused();
    depth.value = 100;
    clock.advance(DEPTH_REFRESH_MS);
    await refused();
    clock.advance(DEPTH_REFRESH_MS);
    await refused();
    expect(depth.reads).toBe(2);
    clock.advance(DEPTH_REFRESH_FAR_MS - DEPTH_REFRESH_MS);
    await refused();
    expect(depth.reads).toBe(3);
  });

  it('requests that come while a reading is under way wait for it instead of counting again', async () => {
    let answer: ((value: number) => void) | undefined;
    const { clock, depth, refused } = acceptorWithDepth(1_000, () => new Promise<number>((resolve) => { answer = resolve; }));
    const first = Array.from({ length: 200 }, () => refused());
    expect(depth.reads).toBe(1);
    answer!(1_000);
    expect(await Promise.all(first)).toEqual(Array.from({ length: 200 }, () => true));
    // The next reading, when due, is one again; so is the one after a failed reading.
    clock.advance(DEPTH_REFRESH_MS);
    const second = Array.from({ length: 50 }, () => refused());
    expect(depth.reads).toBe(2);
    answer!(10);
    expect(await Promise.all(second)).toEqual(Array.from({ length: 50 }, () => false));
  });

  it('a failed reading fails the requests that waited for it, and the next request reads again', async () => {
    let fail: ((e: Error) => void) | undefined;
    const { depth, refused } = acceptorWithDepth(1_000, () => new Promise<number>((_, reject) => { fail = reject; }));
    const waiting = Array.from({ length: 20 }, () => refused().then(() => 'answered', (e: unknown) => (e as Error).message));
    fail!(new Error('store down'));
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['store down']));
    expect(depth.reads).toBe(1);
    void refused().catch(() => undefined);
    expect(depth.reads).toBe(2);
  });
});
