/**
 * The 429 decisions (`QueueRoom`): the store's queue depth, read every 250 ms near a cap and every
 * second far below, once for many requests; caps in all and per client; room reserved before a
 * request stores anything and counted until a reading of the store counts what it stored.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError, ErrorCode, type SmppdError } from '../../../src/core/errors.js';
import { DEPTH_REFRESH_FAR_MS, DEPTH_REFRESH_MS, QueueRoom, type QueueRoomOptions } from '../../../src/dispatch/queue-room.js';
import type { QueueDepth } from '../../../src/store/intake.js';

/** A room over a store whose depth the test sets (`depth.byClient`), counting its readings. */
function roomOver(maxQueued: number, over: Partial<QueueRoomOptions> = {}, read?: () => Promise<QueueDepth>) {
  const clock = new ManualClock();
  const depth = { byClient: {} as Record<string, number>, reads: 0 };
  const current = (): QueueDepth => {
    const byClient = Object.entries(depth.byClient).map(([client, queued]) => ({ client, queued }));
    return { queued: byClient.reduce((n, c) => n + c.queued, 0), byClient };
  };
  const room = new QueueRoom({
    clock, maxQueued, readDepth: () => { depth.reads++; return read ? read() : Promise.resolve(current()); }, ...over,
  });
  /** The refusal of `parts` for `client`, or null when they were let in (and given back at once). */
  const refusal = async (client: string, parts = 1): Promise<SmppdError | null> => room.reserve(client, parts).then((r) => { r.release(); return null; }, (e: unknown) => {
    if (isSmppdError(e, ErrorCode.QUEUE_FULL)) return e;
    throw e;
  });
  const refused = async (client = 'acme', parts = 1) => (await refusal(client, parts)) !== null;
  return { clock, depth, room, refusal, refused };
}

describe('QueueRoom: reading the depth', () => {
  it('far below the caps reads the depth once a second, whatever the number of requests', async () => {
    const { clock, depth, refused } = roomOver(1_000);
    depth.byClient = { acme: 499 };
    for (let i = 0; i < 11; i++) expect(await refused()).toBe(false);
    clock.advance(DEPTH_REFRESH_FAR_MS - 1);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(1);
    clock.advance(1);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(2);
  });

  it('from half a cap on reads it every 250 ms, and refuses at the cap until a reading is below it', async () => {
    const { clock, depth, refused } = roomOver(1_000);
    depth.byClient = { acme: 500 };
    expect(await refused()).toBe(false);
    depth.byClient = { acme: 1_000 };
    clock.advance(DEPTH_REFRESH_MS - 1);
    expect(await refused()).toBe(false);
    clock.advance(1);
    expect(await refused()).toBe(true);
    expect(depth.reads).toBe(2);
    depth.byClient = { acme: 999 };
    expect(await refused()).toBe(true);
    clock.advance(DEPTH_REFRESH_MS);
    expect(await refused()).toBe(false);
    expect(depth.reads).toBe(3);
  });

  it('a client at half its own cap has the depth read every 250 ms', async () => {
    const { clock, depth, refused } = roomOver(1_000_000, { clientMaxQueued: new Map([['acme', 100]]) });
    depth.byClient = { acme: 50 };
    await refused('acme');
    clock.advance(DEPTH_REFRESH_MS);
    await refused('acme');
    expect(depth.reads).toBe(2);
    // Another client, far below every cap: the reading a second old will do.
    clock.advance(DEPTH_REFRESH_MS);
    await refused('globex');
    expect(depth.reads).toBe(2);
  });

  it('requests that come while a reading is under way wait for it instead of counting again', async () => {
    let answer: ((value: QueueDepth) => void) | undefined;
    const { clock, depth, refused } = roomOver(1_000, {}, () => new Promise<QueueDepth>((resolve) => { answer = resolve; }));
    const first = Array.from({ length: 200 }, () => refused());
    expect(depth.reads).toBe(1);
    answer!({ queued: 1_000, byClient: [{ client: 'acme', queued: 1_000 }] });
    expect(await Promise.all(first)).toEqual(Array.from({ length: 200 }, () => true));
    clock.advance(DEPTH_REFRESH_MS);
    const second = Array.from({ length: 50 }, () => refused());
    expect(depth.reads).toBe(2);
    answer!({ queued: 10, byClient: [{ client: 'acme', queued: 10 }] });
    expect(await Promise.all(second)).toEqual(Array.from({ length: 50 }, () => false));
  });

  it('a failed reading fails the requests that waited for it, and the next request reads again', async () => {
    let fail: ((e: Error) => void) | undefined;
    const { depth, refused } = roomOver(1_000, {}, () => new Promise<QueueDepth>((_, reject) => { fail = reject; }));
    const waiting = Array.from({ length: 20 }, () => refused().then(() => 'answered', (e: unknown) => (e as Error).message));
    fail!(new Error('store down'));
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['store down']));
    expect(depth.reads).toBe(1);
    void refused().catch(() => undefined);
    expect(depth.reads).toBe(2);
  });
});

describe('QueueRoom: caps and reservations', () => {
  it('a client over its own cap is refused, naming clients[].maxQueued; other clients are not', async () => {
    const { depth, refusal, refused } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 100]]) });
    depth.byClient = { acme: 100, globex: 500 };
    const e = await refusal('acme');
    expect(e?.message).toBe('client acme has 100 parts queued; clients[].maxQueued is 100 and this request needs 1 more: retry later');
    expect(e?.details).toMatchObject({ limit: 'clients[].maxQueued', retryAfterSeconds: 1 });
    expect(await refused('globex', 400)).toBe(false);
    expect((await refusal('globex', 401))?.message).toBe('the queue holds 600 parts; limits.maxQueued is 1000 and this request needs 401 more: retry later');
  });

  it('says "1 part", not "1 parts"', async () => {
    const { depth, refusal } = roomOver(1, { clientMaxQueued: new Map([['acme', 1]]) });
    depth.byClient = { acme: 1 };
    expect((await refusal('acme'))?.message).toBe('the queue holds 1 part; limits.maxQueued is 1 and this request needs 1 more: retry later');
    const { depth: own, refusal: ownRefusal } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 1]]) });
    own.byClient = { acme: 1 };
    expect((await ownRefusal('acme'))?.message).toBe('client acme has 1 part queued; clients[].maxQueued is 1 and this request needs 1 more: retry later');
  });

  it('counts parts: a request that would pass a cap is refused whole, one that fits it exactly is not', async () => {
    const { depth, refused } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 100]]) });
    depth.byClient = { acme: 90 };
    expect(await refused('acme', 11)).toBe(true);
    expect(await refused('acme', 10)).toBe(false);
  });

  it('0 parts (a bulk upload before its file is counted): refused only when a cap is reached', async () => {
    const { depth, refused } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 100]]) });
    depth.byClient = { acme: 99 };
    expect(await refused('acme', 0)).toBe(false);
    depth.byClient = { acme: 100 };
    const { refused: refusedAtCap } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 100]]) }, async () => ({ queued: 100, byClient: [{ client: 'acme', queued: 100 }] }));
    expect(await refusedAtCap('acme', 0)).toBe(true);
  });

  it('more parts than a cap allows at all: says to split the request', async () => {
    const { refusal } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 100]]) });
    expect((await refusal('acme', 101))?.message).toBe('this request needs 101 queued parts, more than clients[].maxQueued (100) allows: split it');
    expect((await refusal('globex', 1_001))?.message).toBe('this request needs 1001 queued parts, more than limits.maxQueued (1000) allows: split it');
  });

  it('two requests at once cannot both pass through the same room', async () => {
    const { room, depth } = roomOver(1_000, { clientMaxQueued: new Map([['acme', 600]]) });
    depth.byClient = { acme: 100 };
    const both = await Promise.allSettled([room.reserve('acme', 400), room.reserve('acme', 400)]);
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(depth.reads).toBe(1);
  });

  it('what is stored stays counted until a reading that began after its commit; what is given back is free at once', async () => {
    const { clock, room, depth, refused } = roomOver(1_000);
    const held = await room.reserve('acme', 700);
    expect(await refused('acme', 301)).toBe(true);
    // 500 stored; no reading since.
    held.stored(500);
    expect(await refused('acme', 301)).toBe(true);
    // The other 200 are not stored (the upload failed): given back.
    held.release();
    expect(await refused('acme', 500)).toBe(false);
    expect(await refused('acme', 501)).toBe(true);
    // A reading that counts the 500: they are counted once, not twice.
    depth.byClient = { acme: 500 };
    clock.advance(DEPTH_REFRESH_MS);
    expect(await refused('acme', 500)).toBe(false);
    expect(await refused('acme', 501)).toBe(true);
  });

  it('a reading under way when the parts were stored does not take them for counted', async () => {
    let answer: ((value: QueueDepth) => void) | undefined;
    const { clock, room } = roomOver(1_000, {}, () => new Promise<QueueDepth>((resolve) => { answer = resolve; }));
    const first = room.reserve('acme', 0);
    answer!({ queued: 0, byClient: [] });
    (await first).release();
    const held = await room.reserve('acme', 600);
    clock.advance(DEPTH_REFRESH_MS);
    // This reading began before the commit below: it may not see it.
    const reading = room.reserve('acme', 1);
    held.stored(600);
    answer!({ queued: 0, byClient: [] });
    (await reading).release();
    await expect(room.reserve('acme', 401)).rejects.toThrow(/holds 600 parts/);
  });

  it('Retry-After: when the excess could have gone at the upstream\'s rate', async () => {
    const { depth, refusal } = roomOver(1_000, { drainPerSecond: 100 });
    depth.byClient = { acme: 900 };
    expect((await refusal('acme', 350))?.details?.retryAfterSeconds).toBe(3);
    const { refusal: capped } = roomOver(1_000, { drainPerSecond: 1 }, async () => ({ queued: 1_000, byClient: [{ client: 'acme', queued: 1_000 }] }));
    expect((await capped('acme', 700))?.details?.retryAfterSeconds).toBe(600);
  });

  it('a reload\'s caps apply from the next request', async () => {
    const { room, depth, refused } = roomOver(1_000);
    depth.byClient = { acme: 200 };
    expect(await refused('acme', 1)).toBe(false);
    room.setClientMaxQueued(new Map([['acme', 200]]));
    expect(await refused('acme', 1)).toBe(true);
  });
});
