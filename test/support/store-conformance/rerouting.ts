import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { NewBatch } from '../../../src/store/intake.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { MessageMove } from '../../../src/store/rerouting.js';
import { newMessage, partBody } from '../sqlite-store.js';
import { changeEvents, storePerTest, type StoreFactory } from './harness.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null };
const ids = (messages: Array<{ id: string }>) => messages.map((m) => m.id);

/** `id` composed again for `upstream` in `count` parts, each body naming its upstream and part (a claim shows which it got). */
function moveTo(id: string, upstream: string, count = 1, over: Partial<MessageMove> = {}): MessageMove {
  return {
    id, from: 'up1', upstream, encoding: 'UNICODE', registeredDelivery: 0, sourceTon: 1, sourceNpi: 1,
    parts: Array.from({ length: count }, (_, i) =>
      partBody(`${upstream} ${i + 1}/${count}`, count > 1 ? { dataCoding: 8, esmClass: 0x40, sar: { refNum: 9, total: count, seq: i + 1 } } : { dataCoding: 8 })),
    ...over,
  };
}

const accepted = (part: number, smscId: string) => ({ part, kind: 'accepted' as const, smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 });

function delivered(upstream: string, key: string, receivedAt = 5_000): ReceiptRecord {
  return { upstream, keys: [key], status: 'DELIVERED', reason: null, raw: { text: `id:${key} stat:DELIVRD`, stat: 'DELIVRD' }, receivedAt };
}

export function describeRerouting(factory: StoreFactory): void {
  describe('rerouting: queued messages moved to another upstream', () => {
    const t = storePerTest(factory);

    it('movable lists an upstream\'s messages whose every part is queued, oldest first, at most `limit`, read on with `after`', async () => {
      await t.store.accept({ messages: [newMessage('a', { partCount: 2, route: 'uk' }), newMessage('other', { upstream: 'up2' })], now: 1 });
      await t.store.accept({ messages: [newMessage('claimed', { client: 'globex' }), newMessage('partly', { client: 'globex', partCount: 3 })], now: 2 });
      await t.store.accept({ messages: [newMessage('b'), newMessage('c', { partCount: 3 }), newMessage('d')], now: 5 });
      // globex's two: one stays inflight, the other is partly sent (its first part SENT, the rest back in the queue).
      expect(ids(await t.store.claim('up1', 10, { clients: [{ client: 'globex', limit: 2 }], others: 0 }))).toEqual(['claimed', 'partly']);
      await t.store.recordSubmit('partly', [accepted(1, 'P1'), { part: 2, kind: 'requeue', notBefore: 0 }, { part: 3, kind: 'requeue', notBefore: 0 }], 11);

      expect(ids(await t.store.movable('up1', 10, 20))).toEqual(['a', 'b', 'c', 'd']);
      const firstTwo = await t.store.movable('up1', 2, 20);
      expect(ids(firstTwo)).toEqual(['a', 'b']);
      // `after` reads on past the last one listed, and past none with 0.
      expect(ids(await t.store.movable('up1', 2, 20, firstTwo[1]!.seq))).toEqual(['c', 'd']);
      expect(ids(await t.store.movable('up1', 10, 20, 0))).toEqual(['a', 'b', 'c', 'd']);
      expect(await t.store.movable('up1', 0, 20)).toEqual([]);
      expect(ids(await t.store.movable('up2', 10, 20))).toEqual(['other']);
      expect(await t.store.movable('up3', 10, 20)).toEqual([]);
      expect((await t.store.movable('up1', 1, 20))[0]).toEqual({
        id: 'a', client: 'acme', upstream: 'up1', route: 'uk', source: 'ACME', destination: '971500000001', text: 'hello',
        messageType: 'TEXT', validityPeriod: '', attempts: 0, seq: expect.any(Number) as number,
      });
    });

    it('movable lists only what a claim could take at `now`: not held, not-yet-due or expired ones; a resumed or released one again', async () => {
      await t.store.accept({ messages: [newMessage('a')], now: 1 });
      const paused = await t.store.accept({ messages: [newMessage('paused', { partCount: 2 })], batch: bulk, now: 2 });
      await t.store.accept({ messages: [newMessage('scheduled')], batch: bulk, schedule: { client: 'acme', runAt: 9_000, repeat: null }, now: 3 });
      await t.store.accept({ messages: [newMessage('later', { notBefore: 9_000 }), newMessage('expiring', { expiresAt: 50 }), newMessage('b')], now: 4 });
      await t.store.accept({ messages: [newMessage('soon', { partCount: 2, notBefore: 7_000 })], now: 5 });
      await t.store.setBatchState('acme', paused.batchId!, 'paused', 6);

      // Expired once `expires_at` has passed, as a claim and `expire` decide: listed at 50, not at 51.
      expect(ids(await t.store.movable('up1', 10, 50))).toEqual(['a', 'expiring', 'b']);
      expect(ids(await t.store.movable('up1', 10, 51))).toEqual(['a', 'b']);
      // Due at its not-before time, not before (a retry's: below).
      expect(ids(await t.store.movable('up1', 10, 6_999))).toEqual(['a', 'b']);
      expect(ids(await t.store.movable('up1', 10, 7_000))).toEqual(['a', 'b', 'soon']);
      expect(ids(await t.store.movable('up1', 10, 9_000))).toEqual(['a', 'later', 'b', 'soon']);
      // Held ones are passed over, and `limit` counts only those listed.
      expect(ids(await t.store.movable('up1', 2, 9_000))).toEqual(['a', 'later']);

      await t.store.setBatchState('acme', paused.batchId!, 'active', 100);
      expect(ids(await t.store.movable('up1', 10, 100))).toEqual(['a', 'paused', 'b']);
      expect(await t.store.releaseDue(9_000)).toBe(1);
      expect(ids(await t.store.movable('up1', 10, 9_000))).toEqual(['a', 'paused', 'scheduled', 'later', 'b', 'soon']);
      await t.store.setBatchState('acme', paused.batchId!, 'paused', 9_001);
      expect(ids(await t.store.movable('up1', 10, 9_001))).toEqual(['a', 'scheduled', 'later', 'b', 'soon']);
    });

    it('move re-decides on the message as it is: paused, not yet due or expired since the list, it stays', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('p', { partCount: 2 })], batch: bulk, now: 1 });
      await t.store.accept({ messages: [newMessage('x'), newMessage('later', { notBefore: 500 }), newMessage('exp', { expiresAt: 50 })], now: 1 });
      expect(ids(await t.store.movable('up1', 10, 40))).toEqual(['p', 'x', 'exp']);
      await t.store.setBatchState('acme', batchId!, 'paused', 41);

      expect(await t.store.move([moveTo('p', 'up2'), moveTo('x', 'up2'), moveTo('later', 'up2'), moveTo('exp', 'up2')], 60)).toEqual(['x']);
      expect((await t.store.getMessage('p'))?.upstream).toBe('up1');
      expect(await t.rows('SELECT part, upstream, held FROM parts WHERE message_id = $1 ORDER BY part', ['p']))
        .toEqual([{ part: 1, upstream: 'up1', held: 1 }, { part: 2, upstream: 'up1', held: 1 }]);
      expect(await t.store.expire(60)).toBe(1);
      expect(await t.store.getMessage('exp')).toMatchObject({ upstream: 'up1', status: 'FAILED' });
      expect(await t.store.move([moveTo('later', 'up2')], 499)).toEqual([]);
      expect(await t.store.move([moveTo('later', 'up2')], 500)).toEqual(['later']);

      await t.store.setBatchState('acme', batchId!, 'active', 600);
      expect(ids(await t.store.claim('up1', 601, 10))).toEqual(['p']);
      expect(ids(await t.store.claim('up2', 601, 10))).toEqual(['x', 'later']);
    });

    it('a moved message is claimed on its new upstream, composed for it, in its place by age; no longer on the old one', async () => {
      await t.store.accept({ messages: [newMessage('a', { route: 'uk', validityPeriod: '000001000000000R', text: 'hi there' })], now: 1 });
      await t.store.accept({ messages: [newMessage('b', { upstream: 'up2' })], now: 2 });
      expect(await t.store.move([moveTo('a', 'up2')], 3)).toEqual(['a']);

      expect(await t.store.claim('up1', 10, 10)).toEqual([]);
      expect(await t.store.movable('up1', 10, 3)).toEqual([]);
      expect(await t.store.movable('up2', 10, 3)).toEqual([
        expect.objectContaining({ id: 'a', upstream: 'up2', route: 'uk', text: 'hi there', validityPeriod: '000001000000000R' }),
        expect.objectContaining({ id: 'b' }),
      ]);
      expect(await t.store.getMessage('a')).toMatchObject({
        messageId: 'a', upstream: 'up2', route: 'uk', status: 'SUBMITTED', createdAt: 1,
        parts: [{ part: 1, status: 'SUBMITTED', smscMessageId: null, attempts: 0 }],
      });
      expect(await t.rows('SELECT upstream, encoding, registered_delivery, source_ton, source_npi, dest_ton, validity_period FROM messages WHERE id = $1', ['a']))
        .toEqual([{ upstream: 'up2', encoding: 'UNICODE', registered_delivery: 0, source_ton: 1, source_npi: 1, dest_ton: 1, validity_period: '000001000000000R' }]);

      const claimed = await t.store.claim('up2', 10, 10);
      expect(ids(claimed)).toEqual(['a', 'b']);
      expect(claimed[0]).toMatchObject({
        id: 'a', client: 'acme', upstream: 'up2', source: 'ACME', destination: '971500000001', registeredDelivery: 0, sourceTon: 1,
        sourceNpi: 1, destTon: 1, destNpi: 1, validityPeriod: '000001000000000R',
      });
      expect(claimed[0]?.parts).toEqual([{ part: 1, attempts: 0, dataCoding: 8, esmClass: 0, shortMessage: Buffer.from('up2 1/1') }]);
      // Its status has not changed: no event beyond the SUBMITTED of its accept.
      expect(await changeEvents(t.rows, 'a')).toEqual([]);
    });

    it('a message claimed since the list, moved by another call, or no longer on `from` is left alone; unknown ids too', async () => {
      await t.store.accept({ messages: ['a', 'b', 'c', 'd'].map((id) => newMessage(id, { partCount: 2 })), now: 1 });
      expect(ids(await t.store.movable('up1', 10, 1))).toEqual(['a', 'b', 'c', 'd']);
      expect(ids(await t.store.claim('up1', 10, 1))).toEqual(['a']);
      expect(await t.store.move([moveTo('b', 'up2')], 11)).toEqual(['b']);

      const moved = await t.store.move([
        moveTo('a', 'up2'), moveTo('b', 'up3'), moveTo('c', 'up2', 1, { from: 'up9' }), moveTo('nope', 'up2'), moveTo('d', 'up3', 3),
      ], 12);
      expect(moved).toEqual(['d']);
      expect(await t.store.counts()).toMatchObject({ queued: 2 + 1 + 3, inflight: 2 });
      expect((await t.store.getMessage('a'))?.upstream).toBe('up1');
      expect((await t.store.getMessage('b'))?.upstream).toBe('up2');
      expect((await t.store.getMessage('c'))?.upstream).toBe('up1');
      expect(ids(await t.store.claim('up1', 20, 10))).toEqual(['c']);
      expect((await t.store.claim('up2', 20, 10)).map((m) => [m.id, m.parts.length])).toEqual([['b', 1]]);
      expect((await t.store.claim('up3', 20, 10)).map((m) => [m.id, m.parts.length])).toEqual([['d', 3]]);
      expect(await t.store.move([], 21)).toEqual([]);
    });

    it('one part moved as two and two as one: queue depth, counts and the batch stay right through to SENT', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('one'), newMessage('two', { partCount: 2 })], batch: bulk, now: 1 });
      await t.store.accept({ messages: [newMessage('g', { client: 'globex' })], now: 2 });
      expect(await t.store.queueDepth()).toEqual({ queued: 4, byClient: expect.arrayContaining([{ client: 'acme', queued: 3 }, { client: 'globex', queued: 1 }]) });

      expect(await t.store.move([moveTo('one', 'up2', 2), moveTo('two', 'up2', 1)], 3)).toEqual(['one', 'two']);
      const depth = await t.store.queueDepth();
      expect(depth.queued).toBe(4);
      expect(depth.byClient).toEqual(expect.arrayContaining([{ client: 'acme', queued: 3 }, { client: 'globex', queued: 1 }]));
      expect(await t.store.counts()).toMatchObject({ queued: 4, inflight: 0 });
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ total: 2, processed: 0, pending: 2 });
      expect((await t.store.getMessage('one'))?.parts.map((p) => p.part)).toEqual([1, 2]);
      expect((await t.store.getMessage('two'))?.parts.map((p) => p.part)).toEqual([1]);

      const claimed = await t.store.claim('up2', 10, 10);
      expect(claimed.map((m) => [m.id, m.parts.map((p) => p.shortMessage.toString())])).toEqual([
        ['one', ['up2 1/2', 'up2 2/2']], ['two', ['up2 1/1']],
      ]);
      expect(claimed[0]?.parts[1]).toMatchObject({ esmClass: 0x40, sar: { refNum: 9, total: 2, seq: 2 } });
      expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 3 });
      expect(await t.store.queueDepth()).toEqual({ queued: 1, byClient: [{ client: 'globex', queued: 1 }] });

      await t.store.recordSubmit('one', [accepted(1, 'O1')], 20);
      expect((await t.store.getMessage('one'))?.status).toBe('SUBMITTED');
      await t.store.recordSubmit('one', [accepted(2, 'O2')], 21);
      await t.store.recordSubmit('two', [accepted(1, 'T1')], 22);
      expect((await t.store.getMessage('one'))?.status).toBe('SENT');
      expect((await t.store.getMessage('two'))?.status).toBe('SENT');
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ total: 2, processed: 2, pending: 0 });
      expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 0 });
      expect((await changeEvents(t.rows, 'one')).map((e) => [e.status, e.parts])).toEqual([['SENT', 2]]);
      expect((await changeEvents(t.rows, 'two')).map((e) => [e.status, e.parts])).toEqual([['SENT', 1]]);
    });

    it('attempts and the retry time are carried over: listed and moved once the retry is due, claimed with its attempts', async () => {
      await t.store.accept({ messages: [newMessage('a', { partCount: 2 })], now: 1 });
      await t.store.claim('up1', 10, 10);
      // Uncertain, then requeued by a stop: two attempts on part 1, one on part 2.
      await t.store.recordSubmit('a', [
        { part: 1, kind: 'requeue', notBefore: 5_000, attempts: 2 }, { part: 2, kind: 'requeue', notBefore: 5_000, attempts: 1 },
      ], 20);
      expect(await t.store.movable('up1', 10, 4_999)).toEqual([]);
      expect(await t.store.move([moveTo('a', 'up2')], 4_999)).toEqual([]);
      expect((await t.store.movable('up1', 10, 5_000)).map((m) => [m.id, m.attempts])).toEqual([['a', 2]]);

      expect(await t.store.move([moveTo('a', 'up2', 3)], 5_000)).toEqual(['a']);
      expect((await t.store.getMessage('a'))?.parts.map((p) => [p.part, p.attempts, p.updatedAt])).toEqual([[1, 2, 5_000], [2, 2, 5_000], [3, 2, 5_000]]);
      expect(await t.rows('SELECT part, not_before, held FROM parts WHERE message_id = $1 ORDER BY part', ['a']))
        .toEqual([1, 2, 3].map((part) => ({ part, not_before: 5_000, held: 0 })));
      expect(await t.store.readySince('up2', 6_000)).toBe(5_000);
      const [again] = await t.store.claim('up2', 5_000, 10);
      expect(again?.parts.map((p) => [p.part, p.attempts])).toEqual([[1, 2], [2, 2], [3, 2]]);
    });

    it('receipts match on the new upstream once the moved message is sent there, parked ones too', async () => {
      await t.store.accept({ messages: [newMessage('a')], now: 1 });
      // Claimed on the old upstream and back in the queue (its link dropped before the send), then moved.
      await t.store.claim('up1', 10, 10);
      await t.store.recordSubmit('a', [{ part: 1, kind: 'requeue', notBefore: 0 }], 11);
      expect(await t.store.move([moveTo('a', 'up2', 2)], 12)).toEqual(['a']);
      await t.store.claim('up2', 20, 10);

      // Part 2's receipt comes before its submit_sm_resp: parked on the new upstream.
      expect(await t.store.applyReceipt(delivered('up2', 'k2'))).toEqual({ kind: 'parked' });
      await t.store.recordSubmit('a', [accepted(1, 'K1'), accepted(2, 'K2')], 30);
      expect(await t.store.counts()).toMatchObject({ parked: 0 });
      expect((await t.store.getMessage('a'))?.parts.map((p) => p.status)).toEqual(['SENT', 'DELIVERED']);
      // The old upstream's SMSC never had it.
      expect(await t.store.applyReceipt(delivered('up1', 'k1'))).toEqual({ kind: 'parked' });
      expect(await t.store.applyReceipt(delivered('up2', 'k1'))).toMatchObject({ kind: 'matched', messageId: 'a', part: 1, changed: true });
      expect(await t.store.getMessage('a')).toMatchObject({ upstream: 'up2', status: 'DELIVERED' });
      expect((await changeEvents(t.rows, 'a')).map((e) => [e.status, e.parts])).toEqual([['SENT', 2], ['DELIVERED', 2]]);
      // Its events name the upstream it was on when each was written: SUBMITTED, SENT, DELIVERED.
      expect(await t.rows('SELECT upstream FROM outbox WHERE message_id = $1 ORDER BY id', ['a'])).toEqual([{ upstream: 'up1' }, { upstream: 'up2' }, { upstream: 'up2' }]);
    });

    it('a moved message stays in its batch: its pause, resume and abort reach it on the new upstream; a schedule\'s once released', async () => {
      const { batchId } = await t.store.accept({ messages: [newMessage('p'), newMessage('q')], batch: bulk, now: 1 });
      const scheduled = await t.store.accept({ messages: [newMessage('s')], batch: bulk, schedule: { client: 'acme', runAt: 100, repeat: null }, now: 3 });
      expect(await t.store.move([moveTo('p', 'up2'), moveTo('q', 'up2', 2), moveTo('s', 'up2')], 4)).toEqual(['p', 'q']);

      await t.store.setBatchState('acme', batchId!, 'paused', 5);
      expect(await t.store.claim('up2', 10, 10)).toEqual([]);
      await t.store.setBatchState('acme', batchId!, 'active', 11);
      expect(ids(await t.store.claim('up2', 12, 1))).toEqual(['p']);
      await t.store.setBatchState('acme', batchId!, 'aborted', 13);
      expect((await t.store.getMessage('q'))?.parts.map((p) => [p.status, p.reason])).toEqual([['FAILED', 'batch aborted'], ['FAILED', 'batch aborted']]);
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ total: 2, processed: 1 });

      expect(await t.store.releaseDue(100)).toBe(1);
      expect(await t.store.move([moveTo('s', 'up2')], 100)).toEqual(['s']);
      expect(ids(await t.store.claim('up2', 101, 10))).toEqual(['s']);
      expect(await t.store.getBatch('acme', scheduled.batchId!)).toMatchObject({ total: 1, processed: 0 });
    });

    it('a moved message keeps its validity: expiry fails it on the new upstream', async () => {
      await t.store.accept({ messages: [newMessage('a', { expiresAt: 500 }), newMessage('b')], now: 1 });
      expect(await t.store.move([moveTo('a', 'up2', 2), moveTo('b', 'up2')], 2)).toEqual(['a', 'b']);
      expect(ids(await t.store.claim('up2', 501, 1))).toEqual(['b']);
      expect(await t.store.expire(501)).toBe(1);
      expect(await t.store.getMessage('a')).toMatchObject({ status: 'FAILED', reason: 'validity expired before submission' });
      expect(await t.store.counts()).toMatchObject({ queued: 0, inflight: 1 });
    });

    it('the route is stored with the message and read back; null when it has none', async () => {
      await t.store.accept({ messages: [newMessage('uk', { route: 'uk' }), newMessage('none')], now: 1 });
      expect((await t.store.getMessage('uk'))?.route).toBe('uk');
      expect((await t.store.getMessage('none'))?.route).toBeNull();
      expect((await t.store.movable('up1', 10, 1)).map((m) => [m.id, m.route])).toEqual([['uk', 'uk'], ['none', null]]);
    });

    it('a move without parts, or naming a message twice, is refused whole (INTERNAL)', async () => {
      await t.store.accept({ messages: [newMessage('a'), newMessage('b')], now: 1 });
      const empty = await t.store.move([moveTo('a', 'up2'), moveTo('b', 'up2', 1, { parts: [] })], 2).catch((e: unknown) => e);
      expect(isSmppdError(empty, 'INTERNAL')).toBe(true);
      const twice = await t.store.move([moveTo('a', 'up2'), moveTo('a', 'up3')], 2).catch((e: unknown) => e);
      expect(isSmppdError(twice, 'INTERNAL')).toBe(true);
      expect(ids(await t.store.movable('up1', 10, 2))).toEqual(['a', 'b']);
    });
  });
}
