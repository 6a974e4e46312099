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
      expect((await t.store.listSchedules('acme')).map((s) => s.state)).toEqual(['scheduled', 'released']);
      // messages appended to a released schedule's batch go at once
      await t.store.accept({ messages: [newMessage('s3')], batchId: batchId!, now: 1_003 });
      expect(ids(await t.store.claim('up1', 1_004, 10))).toEqual(['s3']);
    });

    it('releasing a schedule now sends its batch; a paused batch still waits for its resume', async () => {
      const { batchId, scheduleId } = await t.store.accept({
        messages: [newMessage('s1')], batch: bulk, schedule: { client: 'acme', runAt: 9_999, repeat: null }, now: 1,
      });
      await t.store.setBatchState('acme', batchId!, 'paused', 2);
      expect(await t.store.setScheduleState('acme', scheduleId!, 'released', 3)).toMatchObject({ id: scheduleId, state: 'released' });
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
      expect(await t.store.getBatch('acme', batchId!)).toMatchObject({ processed: 2, pending: 0 });
      expect(await t.store.releaseDue(10_000)).toBe(0);
      expect(await t.store.counts()).toMatchObject({ queued: 0 });
      expect(isSmppdError(await refusal(t.store.setScheduleState('acme', scheduleId!, 'released', 3)), 'INVALID_STATE_TRANSITION')).toBe(true);
      expect(isSmppdError(await refusal(t.store.accept({ messages: [newMessage('late')], batchId: batchId!, now: 4 })), 'INVALID_STATE_TRANSITION')).toBe(true);
    });

    it('a schedule needs a new batch', async () => {
      const e = await refusal(t.store.accept({ messages: [newMessage('x')], schedule: { client: 'acme', runAt: 1, repeat: null }, now: 1 }));
      expect(isSmppdError(e, 'INTERNAL')).toBe(true);
      expect(await t.store.getMessage('x')).toBeUndefined();
    });
  });
}
