import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { NewBatch } from '../../../src/store/intake.js';
import { newMessage } from '../sqlite-store.js';
import { changeEvents, storePerTest, type StoreFactory } from './harness.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null };
const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('expected a refusal'); }, (e: unknown) => e);
const ids = (claimed: Array<{ id: string }>) => claimed.map((m) => m.id);

export function describeBatchesAndSchedules(factory: StoreFactory): void {
  describe('batches and schedules', () => {
    const t = storePerTest(factory);

    async function batchOf(names: string[], now = 1): Promise<number> {
      const { batchId } = await t.store.accept({ messages: names.map((n) => newMessage(n)), batch: bulk, now });
      return batchId!;
    }

    it('a paused batch is not claimed; resumed, it continues where it stopped', async () => {
      const id = await batchOf(['a', 'b', 'c']);
      await t.store.accept({ messages: [newMessage('solo')], now: 2 });
      expect(ids(await t.store.claim('up1', 10, 1))).toEqual(['a']);
      expect(await t.store.setBatchState('acme', id, 'paused', 11)).toMatchObject({ id, state: 'paused' });
      expect(ids(await t.store.claim('up1', 12, 10))).toEqual(['solo']);
      // a message appended while paused waits too
      await t.store.accept({ messages: [newMessage('d')], batchId: id, now: 13 });
      expect(await t.store.claim('up1', 14, 10)).toEqual([]);
      await t.store.setBatchState('acme', id, 'active', 15);
      expect(ids(await t.store.claim('up1', 16, 10))).toEqual(['b', 'c', 'd']);
    });

    it('a part requeued while its batch is paused waits for the resume', async () => {
      const id = await batchOf(['a']);
      await t.store.claim('up1', 10, 10);
      await t.store.setBatchState('acme', id, 'paused', 11);
      await t.store.recordSubmit('a', [{ part: 1, kind: 'requeue', notBefore: 0 }], 12);
      expect(await t.store.claim('up1', 13, 10)).toEqual([]);
      await t.store.setBatchState('acme', id, 'active', 14);
      expect(ids(await t.store.claim('up1', 15, 10))).toEqual(['a']);
    });

    it('only the allowed batch transitions happen; the others are INVALID_STATE_TRANSITION', async () => {
      const id = await batchOf(['a']);
      const resumeActive = await refusal(t.store.setBatchState('acme', id, 'active', 2));
      expect(isSmppdError(resumeActive, 'INVALID_STATE_TRANSITION')).toBe(true);
      expect((resumeActive as Error).message).toBe('only paused batches can be resumed');
      await t.store.setBatchState('acme', id, 'paused', 3);
      expect((await refusal(t.store.setBatchState('acme', id, 'paused', 4)) as Error).message).toBe('only active batches can be paused');
      await t.store.setBatchState('acme', id, 'aborted', 5);
      for (const to of ['active', 'paused', 'aborted'] as const) {
        expect(isSmppdError(await refusal(t.store.setBatchState('acme', id, to, 6)), 'INVALID_STATE_TRANSITION')).toBe(true);
      }
      expect((await t.store.getBatch('acme', id))?.state).toBe('aborted');
    });

    it('a batch that does not exist, or is another client\'s, is undefined', async () => {
      const id = await batchOf(['a']);
      expect(await t.store.setBatchState('globex', id, 'paused', 2)).toBeUndefined();
      expect(await t.store.setBatchState('acme', id + 100, 'paused', 2)).toBeUndefined();
      expect(await t.store.getBatch('globex', id)).toBeUndefined();
      expect(await t.store.listBatches('globex')).toEqual([]);
    });

    it('aborting fails the queued parts with "batch aborted"; inflight ones finish, or fail if requeued', async () => {
      const id = await batchOf(['a', 'b', 'c']);
      expect(ids(await t.store.claim('up1', 10, 2))).toEqual(['a', 'b']);
      const aborted = await t.store.setBatchState('acme', id, 'aborted', 20);
      expect(aborted).toMatchObject({ state: 'aborted', total: 3, processed: 1, pending: 2 });
      expect(await t.store.getMessage('c')).toMatchObject({ status: 'FAILED', reason: 'batch aborted', parts: [{ status: 'FAILED', reason: 'batch aborted' }] });
      expect((await changeEvents(t.rows)).map((e) => [e.messageId, e.status, e.batchId])).toEqual([['c', 'FAILED', id]]);

      await t.store.recordSubmit('a', [{ part: 1, kind: 'accepted', smscId: 'A', matchKey: 'a', bind: 'b1', attempts: 1 }], 21);
      await t.store.recordSubmit('b', [{ part: 1, kind: 'requeue', notBefore: 30 }], 21);
      expect((await t.store.getMessage('a'))?.status).toBe('SENT');
      expect(await t.store.getMessage('b')).toMatchObject({ status: 'FAILED', reason: 'batch aborted' });
      expect(await t.store.getBatch('acme', id)).toMatchObject({ processed: 3, pending: 0 });
      expect(await t.store.counts()).toMatchObject({ queued: 0, inflight: 0 });
      const appended = await refusal(t.store.accept({ messages: [newMessage('late')], batchId: id, now: 22 }));
      expect(isSmppdError(appended, 'INVALID_STATE_TRANSITION')).toBe(true);
    });

    it('processed counts messages with a final status or every part done; pending is the rest', async () => {
      const { batchId } = await t.store.accept({
        messages: [newMessage('one'), newMessage('two', { partCount: 2 }), newMessage('three')],
        batch: bulk,
        now: 1,
      });
      await t.store.claim('up1', 10, 10);
      await t.store.recordSubmit('one', [{ part: 1, kind: 'accepted', smscId: 'O', matchKey: 'o', bind: 'b', attempts: 1 }], 11);
      await t.store.recordSubmit('two', [{ part: 1, kind: 'accepted', smscId: 'T1', matchKey: 't1', bind: 'b', attempts: 1 }], 11);
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ total: 3, processed: 1, pending: 2 });
      await t.store.recordSubmit('three', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'x', attempts: 1 }], 12);
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ processed: 2, pending: 1 });
      await t.store.applyReceipt({ upstream: 'up1', keys: ['o'], status: 'DELIVERED', reason: null, raw: {}, receivedAt: 13 });
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ processed: 2, pending: 1 }); // 'one' was already counted
      await t.store.recordSubmit('two', [{ part: 2, kind: 'accepted', smscId: 'T2', matchKey: 't2', bind: 'b', attempts: 1 }], 14);
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ processed: 3, pending: 0 });
    });

    it('lists a client\'s batches newest first, with their schedule', async () => {
      const first = await batchOf(['a'], 1);
      const { batchId: second, scheduleId } = await t.store.accept({
        messages: [newMessage('b')], batch: { ...bulk, reqType: 'single' }, schedule: { client: 'acme', runAt: 100, repeat: 'daily' }, now: 2,
      });
      await t.store.accept({ messages: [newMessage('c', { client: 'globex' })], batch: { ...bulk, client: 'globex' }, now: 3 });
      const list = await t.store.listBatches('acme');
      expect(list.map((b) => [b.id, b.reqType, b.scheduleId])).toEqual([[second, 'single', scheduleId], [first, 'bulk', null]]);
    });

    it('a scheduled batch waits for its schedule; releaseDue releases the schedules whose time has come', async () => {
      const { batchId, scheduleId } = await t.store.accept({
        messages: [newMessage('s1'), newMessage('s2')], batch: bulk, schedule: { client: 'acme', runAt: 1_000, repeat: null }, now: 1,
      });
      const { scheduleId: laterId } = await t.store.accept({
        messages: [newMessage('later')], batch: bulk, schedule: { client: 'acme', runAt: 5_000, repeat: null }, now: 2,
      });
      expect(await t.store.listSchedules('acme')).toEqual([
        { id: laterId, client: 'acme', batchId: expect.any(Number), runAt: 5_000, repeat: null, state: 'scheduled', createdAt: 2, runs: 0, lastRunAt: null },
        { id: scheduleId, client: 'acme', batchId, runAt: 1_000, repeat: null, state: 'scheduled', createdAt: 1, runs: 0, lastRunAt: null },
      ]);
      expect(await t.store.claim('up1', 2_000, 10)).toEqual([]);
      expect(await t.store.releaseDue(999)).toBe(0);
      expect(await t.store.releaseDue(1_000)).toBe(1);
      expect(ids(await t.store.claim('up1', 1_001, 10))).toEqual(['s1', 's2']);
      expect(await t.store.releaseDue(1_002)).toBe(0);
      expect((await t.store.listSchedules('acme')).map((s) => [s.state, s.lastRunAt])).toEqual([['scheduled', null], ['released', 1_000]]);
      // messages appended to a released schedule's batch go at once
      await t.store.accept({ messages: [newMessage('s3')], batchId: batchId!, now: 1_003 });
      expect(ids(await t.store.claim('up1', 1_004, 10))).toEqual(['s3']);
    });

    it('releasing a schedule now sends its batch; a paused batch still waits for its resume', async () => {
      const { batchId, scheduleId } = await t.store.accept({
        messages: [newMessage('s1')], batch: bulk, schedule: { client: 'acme', runAt: 9_999, repeat: null }, now: 1,
      });
      await t.store.setBatchState('acme', batchId!, 'paused', 2);
      expect(await t.store.setScheduleState('acme', scheduleId!, 'released', 3)).toMatchObject({ id: scheduleId, state: 'released', runAt: 9_999, runs: 1, lastRunAt: 3 });
      expect(await t.store.claim('up1', 4, 10)).toEqual([]);
      await t.store.setBatchState('acme', batchId!, 'active', 5);
      expect(ids(await t.store.claim('up1', 6, 10))).toEqual(['s1']);
      const again = await refusal(t.store.setScheduleState('acme', scheduleId!, 'cancelled', 7));
      expect(isSmppdError(again, 'INVALID_STATE_TRANSITION')).toBe(true);
      expect((again as Error).message).toBe('only scheduled campaigns can be cancelled');
    });

    it('cancelling a schedule fails its pending messages with "schedule cancelled"', async () => {
      const { batchId, scheduleId } = await t.store.accept({
        messages: [newMessage('s1'), newMessage('s2', { partCount: 2 })], batch: bulk, schedule: { client: 'acme', runAt: 9_999, repeat: null }, now: 1,
      });
      expect(await t.store.setScheduleState('globex', scheduleId!, 'cancelled', 2)).toBeUndefined();
      expect(await t.store.setScheduleState('acme', scheduleId!, 'cancelled', 2)).toMatchObject({ state: 'cancelled' });
      expect(await t.store.getMessage('s2')).toMatchObject({ status: 'FAILED', reason: 'schedule cancelled' });
      expect((await changeEvents(t.rows)).map((e) => [e.messageId, e.status, e.reason])).toEqual([
        ['s1', 'FAILED', 'schedule cancelled'], ['s2', 'FAILED', 'schedule cancelled'],
      ]);
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ state: 'aborted', processed: 2, pending: 0 });
      expect(await t.store.releaseDue(10_000)).toBe(0);
      expect(await t.store.counts()).toMatchObject({ queued: 0 });
      expect(isSmppdError(await refusal(t.store.setScheduleState('acme', scheduleId!, 'released', 3)), 'INVALID_STATE_TRANSITION')).toBe(true);
      expect(isSmppdError(await refusal(t.store.accept({ messages: [newMessage('late')], batchId: batchId!, now: 4 })), 'INVALID_STATE_TRANSITION')).toBe(true);
    });

    describe('a spaced batch (sendbulk delay)', () => {
      /** Releases the turns due at `now`; when the next is due. */
      const nextTurn = async (now: number) => (await t.store.releaseTurns(now)).nextAt;
      const spaced = (messages: string[], now = 1_000, schedule?: number) => t.store.accept({
        messages: messages.map((n) => newMessage(n)), batch: { ...bulk, spacingMs: 1_000 }, now,
        ...(schedule === undefined ? {} : { schedule: { client: 'acme', runAt: schedule, repeat: null } }),
      });

      it('releases one message per turn, the next a spacing after the previous was taken; others are not slowed', async () => {
        await spaced(['a', 'b', 'c']);
        await t.store.accept({ messages: [newMessage('solo')], now: 1_001 });
        expect(ids(await t.store.claim('up1', 1_001, 10))).toEqual(['solo']);
        expect(await t.store.releaseTurns(1_002)).toEqual({ released: 1, nextAt: 2_002 });
        expect(ids(await t.store.claim('up1', 1_003, 10))).toEqual(['a']);
        expect(await t.store.releaseTurns(1_500)).toEqual({ released: 0, nextAt: 2_002 }); // not its turn yet
        expect(await t.store.claim('up1', 1_501, 10)).toEqual([]);
        expect(await nextTurn(2_002)).toBe(3_002);
        // b is not taken before c's turn: c waits for it, and comes a whole spacing after b was seen gone
        expect(await nextTurn(3_002)).toBe(3_102);
        expect(ids(await t.store.claim('up1', 3_050, 10))).toEqual(['b']);
        expect(await nextTurn(3_102)).toBe(4_102);
        expect(await t.store.claim('up1', 3_103, 10)).toEqual([]);
        expect(await nextTurn(4_102)).toBe(5_102);
        expect(ids(await t.store.claim('up1', 4_103, 10))).toEqual(['c']);
        expect(await nextTurn(5_102)).toBeNull(); // no message left
        // appending gives it turns again
        await t.store.accept({ messages: [newMessage('d')], batchId: (await t.store.listBatches('acme'))[0]!.id, now: 6_000 });
        expect(await nextTurn(6_000)).toBe(7_000);
        expect(ids(await t.store.claim('up1', 6_001, 10))).toEqual(['d']);
      });

      it('a pause holds its turns, a resume releases only those whose turn came; a message already final has no turn', async () => {
        const { batchId } = await t.store.accept({
          messages: [newMessage('a'), newMessage('b', { expiresAt: 4_000 }), newMessage('c')], batch: { ...bulk, spacingMs: 1_000 }, now: 1_000,
        });
        await nextTurn(1_000);
        await t.store.setBatchState('acme', batchId!, 'paused', 1_100);
        expect(await nextTurn(5_000)).toBeNull();
        await t.store.setBatchState('acme', batchId!, 'active', 5_001);
        expect(ids(await t.store.claim('up1', 5_002, 10))).toEqual(['a']);
        expect(await t.store.expire(5_003)).toBe(1); // b, held, expires
        expect(await nextTurn(5_004)).toBe(6_004);
        expect(ids(await t.store.claim('up1', 5_005, 10))).toEqual(['c']);
      });

      it('waits for its schedule, then takes its turns from the release', async () => {
        const { scheduleId } = await spaced(['a', 'b'], 1_000, 50_000);
        expect(await nextTurn(2_000)).toBeNull();
        await t.store.setScheduleState('acme', scheduleId!, 'released', 3_000);
        expect(await nextTurn(3_000)).toBe(4_000);
        expect(ids(await t.store.claim('up1', 3_001, 10))).toEqual(['a']);
      });

      it('the next run of a recurring spaced batch is spaced too, its turns from its own release', async () => {
        const day = 86_400_000;
        await t.store.accept({
          messages: ['a', 'b'].map((n) => newMessage(n)), batch: { ...bulk, spacingMs: 1_000 }, now: 1_000,
          schedule: { client: 'acme', runAt: 10_000, repeat: 'DAILY', recurrence: { every: 'DAILY', count: null, until: null, zone: 'UTC' } },
        });
        expect(await t.store.releaseDue(10_000)).toBe(1);
        expect(await nextTurn(10_000)).toBe(11_000);
        expect(ids(await t.store.claim('up1', 10_001, 10))).toEqual(['a']);
        expect(await t.store.releaseDue(10_000 + day)).toBe(1);
        await nextTurn(10_000 + day);
        // b's turn (the first run's) and the second run's first message, a copy of a; not the copy of b
        const next = ids(await t.store.claim('up1', 10_001 + day, 10));
        expect(next).toHaveLength(2);
        expect(next[0]).toBe('b');
        expect(['a', 'b']).not.toContain(next[1]);
        expect(await t.store.claim('up1', 10_002 + day, 10)).toEqual([]);
      });
    });

    it('a schedule needs a new batch', async () => {
      const e = await refusal(t.store.accept({ messages: [newMessage('x')], schedule: { client: 'acme', runAt: 1, repeat: null }, now: 1 }));
      expect(isSmppdError(e, 'INTERNAL')).toBe(true);
      expect(await t.store.getMessage('x')).toBeUndefined();
    });
  });
}
