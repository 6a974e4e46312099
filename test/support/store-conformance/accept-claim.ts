import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { NewBatch } from '../../../src/store/intake.js';
import { newMessage, partBody } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: 'spring' };

export function describeAcceptAndClaim(factory: StoreFactory): void {
  describe('accept and claim', () => {
    const t = storePerTest(factory);

    it('readySince: when the part a claim would take first became ready; null when nothing may go', async () => {
      expect(await t.store.readySince('up1', 5_000)).toBeNull();
      await t.store.accept({ messages: [newMessage('a'), newMessage('b')], now: 1_000 });
      expect(await t.store.readySince('up1', 5_000)).toBe(1_000);
      await t.store.claim('up1', 2_000, 1);
      expect(await t.store.readySince('up1', 5_000)).toBe(1_000); // b, accepted with a
      await t.store.claim('up1', 2_000, 1);
      expect(await t.store.readySince('up1', 5_000)).toBeNull();
      await t.store.accept({ messages: [newMessage('later', { notBefore: 9_000 })], now: 3_000 });
      expect(await t.store.readySince('up1', 5_000)).toBeNull();
      expect(await t.store.readySince('up1', 9_500)).toBe(9_000);
    });

    it('accept stores messages SUBMITTED with every part queued', async () => {
      expect(await t.store.accept({ messages: [newMessage('a', { partCount: 3 }), newMessage('b')], now: 1_000 }))
        .toEqual({ batchId: null, scheduleId: null });
      const a = await t.store.getMessage('a');
      expect(a).toMatchObject({ messageId: 'a', client: 'acme', upstream: 'up1', batchId: null, status: 'SUBMITTED', reason: null, createdAt: 1_000 });
      expect(a?.parts.map((p) => [p.part, p.status, p.smscMessageId, p.attempts])).toEqual([
        [1, 'SUBMITTED', null, 0], [2, 'SUBMITTED', null, 0], [3, 'SUBMITTED', null, 0],
      ]);
      // one SUBMITTED event per message
      expect(await t.store.counts()).toEqual({ queued: 4, inflight: 0, parked: 0, outbox: 2, deadEvents: 0 });
      expect(await t.store.queueDepth()).toEqual({ queued: 4, byClient: [{ client: 'acme', queued: 4 }] });
      expect(await t.store.getMessage('nope')).toBeUndefined();
    });

    it('accept with a batch sets its total; appending by batchId grows it', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('a'), newMessage('b')], batch: bulk, now: 1 });
      expect(batchId).toEqual(expect.any(Number));
      await t.store.accept({ messages: [newMessage('c')], batchId: batchId!, now: 2 });
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({
        id: batchId, client: 'acme', senderId: 'ACME', reqType: 'bulk', campaignName: 'spring', state: 'active',
        total: 3, processed: 0, pending: 3, createdAt: 1, scheduleId: null,
      });
      expect((await t.store.getMessage('c'))?.batchId).toBe(batchId);
    });

    it('appending to a batch that does not exist, or is another client\'s, is BATCH_NOT_FOUND', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('a')], batch: bulk, now: 1 });
      const missing = await t.store.accept({ messages: [newMessage('b')], batchId: 4242, now: 2 }).catch((e: unknown) => e);
      expect(isSmppdError(missing, 'BATCH_NOT_FOUND')).toBe(true);
      const other = await t.store.accept({ messages: [newMessage('c', { client: 'globex' })], batchId: batchId!, now: 2 }).catch((e: unknown) => e);
      expect(isSmppdError(other, 'BATCH_NOT_FOUND')).toBe(true);
      expect(await t.store.getMessage('c')).toBeUndefined();
    });

    // The contract part of the SQLite group commit's 'a failing write rejects only its caller' (group-commit.test.ts).
    it('an accept naming a message id already stored is refused whole: none of its messages is kept', async () => {
      await t.store.accept({ messages: [newMessage('taken')], now: 1 });
      const refused = await t.store.accept({ messages: [newMessage('b'), newMessage('taken')], now: 2 }).catch((e: unknown) => e);
      expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
      expect(await t.store.getMessage('b')).toBeUndefined();
      expect(await t.store.counts()).toMatchObject({ queued: 1, outbox: 1 }); // 'taken' and its SUBMITTED
    });

    it('claim hands out the oldest messages first, all their queued parts in order, and makes them inflight', async () => {
      const sar = { refNum: 300, total: 2, seq: 1 };
      await t.store.accept({ messages: [newMessage('old', { partCount: 2 })], now: 1 });
      await t.store.accept({
        messages: [
          newMessage('mid', { parts: [partBody('x', { sar, messagePayload: Buffer.from([1, 2, 3]) }), partBody('y')] }),
          newMessage('new'),
        ],
        now: 2,
      });
      const first = await t.store.claim('up1', 10, 2);
      expect(first.map((m) => m.id)).toEqual(['old', 'mid']);
      expect(first[0]).toMatchObject({
        id: 'old', client: 'acme', upstream: 'up1', source: 'ACME', destination: '971500000001', registeredDelivery: 1,
        sourceTon: 5, sourceNpi: 0, destTon: 1, destNpi: 1, validityPeriod: '',
      });
      expect(first[0]?.parts.map((p) => [p.part, p.shortMessage.toString('latin1'), p.esmClass, p.sar?.seq])).toEqual([
        [1, 'part 1', 0x40, 1], [2, 'part 2', 0x40, 2],
      ]);
      expect(first[1]?.parts[0]).toEqual({ part: 1, attempts: 0, dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('x'), sar, messagePayload: Buffer.from([1, 2, 3]) });
      expect(first[1]?.parts[1]).toEqual({ part: 2, attempts: 0, dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('y') });
      expect((await t.store.queueDepth()).queued).toBe(1);
      expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 4 });

      expect((await t.store.claim('up1', 10, 10)).map((m) => m.id)).toEqual(['new']);
      expect(await t.store.claim('up1', 10, 10)).toEqual([]);
    });

    it('claim takes only its upstream\'s messages', async () => {
      await t.store.accept({ messages: [newMessage('a', { upstream: 'up2' }), newMessage('b')], now: 1 });
      expect((await t.store.claim('up1', 10, 10)).map((m) => m.id)).toEqual(['b']);
      expect((await t.store.claim('up2', 10, 10)).map((m) => m.id)).toEqual(['a']);
    });

    it('claim waits for notBefore and skips expired messages', async () => {
      await t.store.accept({
        messages: [
          newMessage('later', { notBefore: 5_000 }),
          newMessage('expired', { expiresAt: 999 }),
          newMessage('now', { expiresAt: 1_000 }),
        ],
        now: 1,
      });
      expect((await t.store.claim('up1', 1_000, 10)).map((m) => m.id)).toEqual(['now']);
      expect(await t.store.claim('up1', 4_999, 10)).toEqual([]);
      expect((await t.store.claim('up1', 5_000, 10)).map((m) => m.id)).toEqual(['later']);
    });

    it('a requeued message keeps its place: once eligible again it goes before newer ones', async () => {
      await t.store.accept({ messages: [newMessage('a')], now: 1 });
      await t.store.claim('up1', 10, 10);
      await t.store.accept({ messages: [newMessage('b')], now: 2 });
      await t.store.recordSubmit('a', [{ part: 1, kind: 'requeue', notBefore: 500 }], 20);
      expect((await t.store.claim('up1', 100, 10)).map((m) => m.id)).toEqual(['b']);
      await t.store.recordSubmit('b', [{ part: 1, kind: 'requeue', notBefore: 0 }], 101);
      expect((await t.store.claim('up1', 500, 10)).map((m) => m.id)).toEqual(['a', 'b']);
    });

    it('claim returns only the parts not yet done when some were requeued', async () => {
      await t.store.accept({ messages: [newMessage('a', { partCount: 3 })], now: 1 });
      await t.store.claim('up1', 10, 10);
      await t.store.recordSubmit('a', [
        { part: 1, kind: 'accepted', smscId: 'S1', matchKey: 's1', bind: 'b1', attempts: 1 },
        { part: 2, kind: 'requeue', notBefore: 50 },
        { part: 3, kind: 'requeue', notBefore: 50 },
      ], 20);
      const [again] = await t.store.claim('up1', 50, 10);
      expect(again?.parts.map((p) => p.part)).toEqual([2, 3]);
    });

    it('claim with limit 0 claims nothing', async () => {
      await t.store.accept({ messages: [newMessage('a')], now: 1 });
      expect(await t.store.claim('up1', 10, 0)).toEqual([]);
      expect((await t.store.counts()).queued).toBe(1);
    });
  });

  describe('clients: queue depth per client and claims by share', () => {
    const t = storePerTest(factory);
    const ids = (claimed: Array<{ id: string }>) => claimed.map((m) => m.id);
    /** `n` one-part messages `<prefix>0…` of `client`, accepted at `now`. */
    const queue = (client: string, prefix: string, n: number, now: number, over: Parameters<typeof newMessage>[1] = {}) =>
      t.store.accept({ messages: Array.from({ length: n }, (_, i) => newMessage(`${prefix}${i}`, { client, ...over })), now });

    it('queueDepth counts each client\'s queued parts, held ones too, and no longer those claimed', async () => {
      expect(await t.store.queueDepth()).toEqual({ queued: 0, byClient: [] });
      await t.store.accept({ messages: [newMessage('a1', { partCount: 3 }), newMessage('a2')], now: 1 });
      await t.store.accept({ messages: [newMessage('g1', { client: 'globex', partCount: 2 })], now: 2 });
      // A scheduled batch: held, still queued.
      await t.store.accept({ messages: [newMessage('s1', { client: 'initech' })], batch: { ...bulk, client: 'initech' }, schedule: { client: 'initech', runAt: 9_000, repeat: null }, now: 3 });
      const depth = await t.store.queueDepth();
      expect(depth.queued).toBe(7);
      expect(sortByClient(depth.byClient)).toEqual([{ client: 'acme', queued: 4 }, { client: 'globex', queued: 2 }, { client: 'initech', queued: 1 }]);
      await t.store.claim('up1', 10, 10);
      expect(await t.store.queueDepth()).toEqual({ queued: 1, byClient: [{ client: 'initech', queued: 1 }] });
      expect((await t.store.counts()).queued).toBe(1);
    });

    it('claimed messages name their client', async () => {
      await queue('globex', 'g', 1, 1);
      expect((await t.store.claim('up1', 10, 10)).map((m) => m.client)).toEqual(['globex']);
    });

    it('a number takes at most that many of each client, each client\'s oldest, all interleaved by age', async () => {
      await queue('acme', 'a', 5, 1);
      await queue('globex', 'g', 2, 2);
      await queue('acme', 'late', 1, 3);
      expect(ids(await t.store.claim('up1', 10, 3))).toEqual(['a0', 'a1', 'a2', 'g0', 'g1']);
      expect(ids(await t.store.claim('up1', 10, 3))).toEqual(['a3', 'a4', 'late0']);
    });

    it('shares: each listed client up to its own limit, every other client up to `others`, limit 0 none', async () => {
      await queue('acme', 'a', 10, 1);
      await queue('globex', 'g', 10, 2);
      await queue('initech', 'i', 10, 3);
      await queue('umbrella', 'u', 10, 4);
      const claimed = await t.store.claim('up1', 10, { clients: [{ client: 'acme', limit: 3 }, { client: 'globex', limit: 0 }, { client: 'nobody', limit: 5 }], others: 1 });
      expect(ids(claimed)).toEqual(['a0', 'a1', 'a2', 'i0', 'u0']);
      expect(await t.store.claim('up1', 10, { clients: [], others: 0 })).toEqual([]);
      expect(ids(await t.store.claim('up1', 10, { clients: [{ client: 'globex', limit: 2 }], others: 0 }))).toEqual(['g0', 'g1']);
    });

    it('max: at most that many in all; the clients not listed are walked first, in name order, then the listed ones in list order', async () => {
      await queue('acme', 'a', 10, 1);
      await queue('globex', 'g', 10, 2);
      await queue('initech', 'i', 10, 3);
      await queue('umbrella', 'u', 10, 4);
      const shares = { clients: [{ client: 'acme', limit: 3 }, { client: 'umbrella', limit: 4 }], others: 1 };
      // globex and initech first (one each), then acme's 3; umbrella's share is cut.
      expect(ids(await t.store.claim('up1', 10, { ...shares, max: 5 }))).toEqual(['a0', 'a1', 'a2', 'g0', 'i0']);
      // The probes alone fill it.
      expect(ids(await t.store.claim('up1', 10, { ...shares, max: 2 }))).toEqual(['g1', 'i1']);
      expect(await t.store.claim('up1', 10, { ...shares, max: 0 })).toEqual([]);
      // Room to spare: every share whole.
      expect(ids(await t.store.claim('up1', 10, { ...shares, max: 100 }))).toEqual(['a3', 'a4', 'a5', 'g2', 'i2', 'u0', 'u1', 'u2', 'u3']);
      expect((await t.store.counts()).queued).toBe(40 - 16);
    });

    it('a client with a long queue takes no turn of another\'s: one of each goes first, whatever their ages', async () => {
      await queue('acme', 'a', 200, 1);
      await queue('globex', 'g', 1, 2);
      expect(ids(await t.store.claim('up1', 10, 1))).toEqual(['a0', 'g0']);
    });

    it('shares pass over what may not go yet (held, not before, expired) and what another claim took', async () => {
      await t.store.accept({ messages: [newMessage('held', { client: 'globex' })], batch: { ...bulk, client: 'globex' }, schedule: { client: 'globex', runAt: 9_000, repeat: null }, now: 1 });
      await queue('globex', 'later', 1, 2, { notBefore: 5_000 });
      await queue('globex', 'gone', 1, 3, { expiresAt: 5 });
      await queue('globex', 'g', 2, 4);
      await queue('acme', 'a', 2, 5);
      expect(ids(await t.store.claim('up1', 10, { clients: [{ client: 'globex', limit: 5 }], others: 1 }))).toEqual(['g0', 'g1', 'a0']);
      expect(ids(await t.store.claim('up1', 10, { clients: [{ client: 'globex', limit: 5 }], others: 0 }))).toEqual([]);
      expect(ids(await t.store.claim('up1', 5_000, { clients: [{ client: 'globex', limit: 5 }], others: 0 }))).toEqual(['later0']);
    });

    it('readySince is the earliest of each client\'s first ready part', async () => {
      await queue('acme', 'a', 2, 1_000);
      await queue('globex', 'g', 1, 500, { notBefore: 800 });
      expect(await t.store.readySince('up1', 2_000)).toBe(800);
      await t.store.claim('up1', 2_000, { clients: [{ client: 'globex', limit: 1 }], others: 0 });
      expect(await t.store.readySince('up1', 2_000)).toBe(1_000);
    });
  });
}

function sortByClient<T extends { client: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
}
