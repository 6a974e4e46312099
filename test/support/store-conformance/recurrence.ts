import { describe, expect, it } from 'vitest';
import type { Recurrence } from '../../../src/core/recurrence.js';
import type { NewBatch } from '../../../src/store/intake.js';
import { newMessage } from '../sqlite-store.js';
import { statusEvents, storePerTest, type StoreFactory } from './harness.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: 'weekly news' };
const HOUR = 3_600_000;
/** 09:00 in London on Saturday 28 March 2026 (GMT); the clocks go forward the next night. */
const FIRST = Date.UTC(2026, 2, 28, 9);
/** 09:00 BST on the 29th: 23 hours later. */
const SECOND = FIRST + 23 * HOUR;
const THIRD = SECOND + 24 * HOUR;
const daily: Recurrence = { every: 'DAILY', count: null, until: null, zone: 'Europe/London' };

interface MessageRow { id: string; batch_id: number; status: string; expires_at: number | null }
interface PartRow { message_id: string; part: number; held: number; state: string; short_message: Uint8Array; sar_ref: number | null }

export function describeRecurringSchedules(factory: StoreFactory): void {
  describe('recurring schedules', () => {
    const t = storePerTest(factory);

    async function series(recurrence: Recurrence = daily, prefix = 'm'): Promise<{ scheduleId: number; batchId: number }> {
      const accepted = await t.store.accept({
        messages: [newMessage(`${prefix}1`, { expiresAt: FIRST + 2 * HOUR }), newMessage(`${prefix}2`, { partCount: 2 })],
        batch: bulk,
        schedule: { client: 'acme', runAt: FIRST, repeat: recurrence.every, recurrence },
        now: 1,
      });
      return { scheduleId: accepted.scheduleId!, batchId: accepted.batchId! };
    }
    const schedule = async (id: number) => (await t.store.listSchedules('acme')).find((s) => s.id === id)!;
    const messagesOf = (batchId: number) =>
      t.rows<MessageRow>('SELECT id, batch_id, status, expires_at FROM messages WHERE batch_id = $1 ORDER BY seq', [batchId]);
    const partsOf = (batchId: number) =>
      t.rows<PartRow>('SELECT message_id, part, held, state, short_message, sar_ref FROM parts WHERE batch_id = $1 ORDER BY message_seq, part', [batchId]);
    const claimedIds = async (now: number) => (await t.store.claim('up1', now, 100)).map((m) => m.id);

    it('a run released makes the next run\'s batch: the messages copied with new ids, held, their validity moved; the schedule moves on', async () => {
      const { scheduleId, batchId } = await series();
      expect(await t.store.releaseDue(FIRST)).toBe(1);
      expect(await claimedIds(FIRST)).toEqual(['m1', 'm2']);

      const s = await schedule(scheduleId);
      expect(s).toMatchObject({ state: 'scheduled', runAt: SECOND, runs: 1, lastRunAt: FIRST, repeat: daily });
      expect(s.batchId).not.toBe(batchId);
      const copies = await messagesOf(s.batchId);
      expect(copies.map((m) => m.status)).toEqual(['SUBMITTED', 'SUBMITTED']);
      expect(copies.map((m) => m.id)).not.toContain('m1');
      expect(new Set(copies.map((m) => m.id)).size).toBe(2);
      expect(copies[0]!.expires_at).toBe(SECOND + 2 * HOUR);
      const [released, next] = [await partsOf(batchId), await partsOf(s.batchId)];
      expect(next.map((p) => [p.part, p.held, p.state])).toEqual([[1, 1, 'queued'], [1, 1, 'queued'], [2, 1, 'queued']]);
      // The composed bodies, the concatenation reference too: what the SMSC gets is the same.
      expect(next.map((p) => [Buffer.from(p.short_message).toString(), p.sar_ref])).toEqual(released.map((p) => [Buffer.from(p.short_message).toString(), p.sar_ref]));
      // Each copy is a new message: its client is told it was SUBMITTED.
      expect((await statusEvents(t.rows, copies[1]!.id)).map((e) => [e.status, e.batchId])).toEqual([['SUBMITTED', s.batchId]]);

      // The past run still names its schedule; the next one is listed with the same campaign.
      expect((await t.store.listBatches('acme')).map((b) => [b.id, b.scheduleId, b.campaignName, b.total])).toEqual([
        [s.batchId, scheduleId, 'weekly news', 2], [batchId, scheduleId, 'weekly news', 2],
      ]);
      expect(await t.store.releaseDue(SECOND - 1)).toBe(0);
      expect(await claimedIds(SECOND - 1)).toEqual([]);
      expect(await t.store.releaseDue(SECOND)).toBe(1);
      expect(await claimedIds(SECOND)).toEqual(copies.map((m) => m.id));
      expect(await schedule(scheduleId)).toMatchObject({ state: 'scheduled', runAt: THIRD, runs: 2, lastRunAt: SECOND });
    });

    it('count, or until, ends the series: its last run is released and the schedule stays released', async () => {
      const counted = await series({ ...daily, count: 2 }, 'c');
      const untilSecond = await series({ ...daily, until: SECOND }, 'u');
      const once = await t.store.accept({ messages: [newMessage('once')], batch: bulk, schedule: { client: 'acme', runAt: FIRST, repeat: null }, now: 1 });
      expect(await t.store.releaseDue(FIRST)).toBe(3);
      expect(await schedule(untilSecond.scheduleId)).toMatchObject({ state: 'scheduled', runAt: SECOND });
      expect(await schedule(once.scheduleId!)).toMatchObject({ state: 'released', repeat: null, runs: 1, lastRunAt: FIRST, runAt: FIRST });
      expect(await t.store.releaseDue(SECOND)).toBe(2);
      for (const { scheduleId } of [counted, untilSecond]) {
        expect(await schedule(scheduleId)).toMatchObject({ state: 'released', runAt: SECOND, runs: 2, lastRunAt: SECOND });
      }
      expect(await t.store.listBatches('acme')).toHaveLength(5);
      expect(await t.store.releaseDue(THIRD + 7 * 24 * HOUR)).toBe(0);
    });

    it('abort/schedule ends the series: the pending run\'s messages FAIL, the runs before are untouched', async () => {
      const { scheduleId, batchId } = await series();
      await t.store.releaseDue(FIRST);
      await t.store.claim('up1', FIRST, 1);
      const cancelled = await t.store.setScheduleState('acme', scheduleId, 'cancelled', FIRST + HOUR);
      expect(cancelled).toMatchObject({ state: 'cancelled', runs: 1 });
      expect((await messagesOf(cancelled!.batchId)).map((m) => [m.status])).toEqual([['FAILED'], ['FAILED']]);
      expect((await messagesOf(batchId)).map((m) => m.status)).toEqual(['SUBMITTED', 'SUBMITTED']);
      expect(await claimedIds(FIRST + HOUR)).toEqual(['m2']);
      expect(await t.store.releaseDue(THIRD)).toBe(0);
      expect(await t.store.listBatches('acme')).toHaveLength(2);
    });

    it('send-now releases the pending run now; the series goes on at its next regular time', async () => {
      const { scheduleId } = await series();
      const early = FIRST - 2 * HOUR;
      expect(await t.store.setScheduleState('acme', scheduleId, 'released', early)).toMatchObject({ state: 'scheduled', runAt: SECOND, runs: 1, lastRunAt: early });
      expect(await claimedIds(early)).toEqual(['m1', 'm2']);
      // The run of 09:00 went at 07:00: nothing goes at 09:00.
      expect(await t.store.releaseDue(FIRST)).toBe(0);
    });

    it('a store opened again goes on with the series, passing over the runs missed while it was closed', async () => {
      const { scheduleId } = await series();
      await t.store.releaseDue(FIRST);
      await t.reopen();
      // Closed until two days after the second run's time: the second goes now, the third was missed.
      expect(await t.store.releaseDue(THIRD + 24 * HOUR + HOUR)).toBe(1);
      expect(await schedule(scheduleId)).toMatchObject({ state: 'scheduled', runAt: THIRD + 2 * 24 * HOUR, runs: 2 });
      expect(await t.store.listBatches('acme')).toHaveLength(3);
    });
  });
}
