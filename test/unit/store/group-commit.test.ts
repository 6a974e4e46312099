import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError } from '../../../src/core/errors.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

/** Settles `p` into a value or the error, so a test can look at several outcomes at once. */
const outcome = <T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> =>
  p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }));

/** Lets resolved promises run their callbacks. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('SqliteStore group commit', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  it('commits 500 concurrent accepts in one transaction when the window elapses, then resolves them', async () => {
    folder = storeFolder();
    const clock = new ManualClock();
    const store = await folder.open({ clock, commitWindowMs: 2 });
    let resolved = 0;
    const writes = Array.from({ length: 500 }, (_, i) =>
      store.accept({ messages: [newMessage(`m${i}`)], now: 1 }).then(() => { resolved++; }));
    await settle();
    expect(store.stats).toMatchObject({ commits: 0, queued: 500 });
    expect(resolved).toBe(0);
    expect(await store.getMessage('m0')).toBeUndefined(); // not committed, not visible

    clock.advance(1);
    await settle();
    expect(store.stats.commits).toBe(0);
    clock.advance(1);
    await Promise.all(writes);
    // No operation threw: the batch ran once, without savepoints.
    expect(store.stats).toMatchObject({ commits: 1, committedOps: 500, failedOps: 0, queued: 0, reruns: 0 });
    expect((await store.counts()).queued).toBe(500);
  });

  it('commits at once when maxBatch writes are queued, without waiting for the window', async () => {
    folder = storeFolder();
    const clock = new ManualClock();
    const store = await folder.open({ clock, maxBatch: 100 });
    const writes = Array.from({ length: 500 }, (_, i) => store.accept({ messages: [newMessage(`m${i}`)], now: 1 }));
    await Promise.all(writes);
    expect(store.stats.commits).toBe(5);
    expect(clock.pendingTimers).toBe(0);
  });

  it('with a real clock, 500 concurrent accepts take far fewer transactions than calls', async () => {
    folder = storeFolder();
    const store = await folder.open();
    await Promise.all(Array.from({ length: 500 }, (_, i) => store.accept({ messages: [newMessage(`m${i}`)], now: 1 })));
    expect(store.stats.committedOps).toBe(500);
    expect(store.stats.commits).toBeLessThanOrEqual(5);
    expect((await store.counts()).queued).toBe(500);
  });

  it('a failing write rejects only its caller and leaves nothing of itself; the others commit', async () => {
    folder = storeFolder();
    const clock = new ManualClock();
    const store = await folder.open({ clock });
    const first = store.accept({ messages: [newMessage('taken')], now: 1 });
    clock.advance(2);
    await first;

    const a = outcome(store.accept({ messages: [newMessage('a')], now: 2 }));
    // 'b' would be stored first, then 'taken' breaks the unique id: the whole call must roll back.
    const bad = outcome(store.accept({ messages: [newMessage('b'), newMessage('taken')], now: 2 }));
    const paused = outcome(store.setBatchState('acme', 999, 'paused', 2));
    const c = outcome(store.accept({ messages: [newMessage('c')], now: 2 }));
    clock.advance(2);

    expect(await a).toMatchObject({ ok: true });
    expect(await c).toMatchObject({ ok: true });
    expect(await paused).toEqual({ ok: true, value: undefined });
    const failed = await bad;
    expect(failed.ok).toBe(false);
    expect(isSmppdError(failed.ok ? null : failed.error, 'INTERNAL')).toBe(true);
    // The batch of a, bad, paused and c was rolled back and run again with savepoints: once.
    expect(store.stats).toMatchObject({ commits: 2, failedOps: 1, reruns: 1 });
    expect(await store.getMessage('a')).toBeDefined();
    expect(await store.getMessage('b')).toBeUndefined();
    expect(await store.getMessage('c')).toBeDefined();
    expect((await store.counts()).queued).toBe(3);
  });

  it('an SmppdError from an operation reaches its caller as it was thrown', async () => {
    folder = storeFolder();
    const store = await folder.open();
    const { batchId } = await store.accept({
      messages: [newMessage('a')],
      batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
      now: 1,
    });
    await store.setBatchState('acme', batchId!, 'aborted', 2);
    const [ok, refused] = await Promise.all([
      outcome(store.accept({ messages: [newMessage('b')], now: 3 })),
      outcome(store.setBatchState('acme', batchId!, 'paused', 3)),
    ]);
    expect(ok.ok).toBe(true);
    expect(refused.ok).toBe(false);
    expect(isSmppdError(refused.ok ? null : refused.error, 'INVALID_STATE_TRANSITION')).toBe(true);
  });

  it('a submit outcome queued after a receipt in the same batch runs first: the receipt matches instead of parking', async () => {
    folder = storeFolder();
    const clock = new ManualClock();
    const store = await folder.open({ clock });
    const accepted = store.accept({ messages: [newMessage('m1')], now: 1 });
    clock.advance(2);
    await accepted;
    const claimed = store.claim('up1', 2, 10);
    clock.advance(2);
    expect((await claimed).map((m) => m.id)).toEqual(['m1']);

    // As on the wire: the submit_sm_resp and the receipt arrive together, and the receipt's
    // write is queued first (its handler runs before the submit outcome's promise chain).
    const receipt = store.applyReceipt({ upstream: 'up1', keys: ['s1'], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD' }, receivedAt: 3 });
    const submit = store.recordSubmit('m1', [{ part: 1, kind: 'accepted', smscId: 's1', matchKey: 's1', bind: 'b1', attempts: 1 }], 3);
    clock.advance(2);
    await submit;
    expect(await receipt).toMatchObject({ kind: 'matched', messageId: 'm1', part: 1, changed: true });
    expect((await store.counts()).parked).toBe(0);
    expect((await store.getMessage('m1'))?.status).toBe('DELIVERED');
  });

  it('close commits what is queued; writes after close are refused', async () => {
    folder = storeFolder();
    const clock = new ManualClock();
    const store = await folder.open({ clock });
    const pending = Array.from({ length: 10 }, (_, i) => store.accept({ messages: [newMessage(`m${i}`)], now: 1 }));
    await store.close();
    await Promise.all(pending);
    const late = await outcome(store.accept({ messages: [newMessage('late')], now: 2 }));
    expect(late.ok).toBe(false);
    const reopened = await folder.open();
    expect((await reopened.counts()).queued).toBe(10);
    expect(await reopened.getMessage('late')).toBeUndefined();
  });
});
