import { describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../../src/sms/status.js';
import type { PartResult } from '../../../src/store/claims.js';
import type { MessageRecord } from '../../../src/store/message-records.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const accepted = (part: number, smscId: string, bind = 'b1'): PartResult =>
  ({ part, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind, attempts: 1 });

function receipt(smscId: string, status: DeliveryStatus, receivedAt: number, reason: string | null = null): ReceiptRecord {
  return { upstream: 'up1', keys: [smscId.toLowerCase()], status, reason, raw: { text: `id:${smscId}` }, receivedAt };
}

/** What a scenario checks of a record: all but its seq (a BIGSERIAL or rowid, which the stores number alike but need not). */
const shape = ({ seq: _seq, ...rest }: MessageRecord) => rest;

export function describeMessageRecords(factory: StoreFactory): void {
  describe('message records', () => {
    const t = storePerTest(factory, { records: true });

    async function claimed(ids: string[], o: { partCount?: number; expiresAt?: number } = {}): Promise<void> {
      await t.store.accept({
        messages: ids.map((id) => newMessage(id, { partCount: o.partCount ?? 1, ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}) })),
        now: 1_000,
      });
      await t.store.claim('up1', 1_000, 100);
    }

    it('queues one record per message as it becomes final: delivered, failed, rejected, expired; SENT is not final', async () => {
      await claimed(['d', 'f', 'r', 's']);
      await t.store.accept({ messages: [newMessage('x', { expiresAt: 1_500 })], now: 1_000 });
      await t.store.recordSubmit('d', [accepted(1, 'D1')], 2_000);
      await t.store.recordSubmit('f', [accepted(1, 'F1')], 2_000);
      await t.store.recordSubmit('r', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', attempts: 1 }], 2_100);
      await t.store.recordSubmit('s', [accepted(1, 'S1')], 2_000);
      expect(await t.store.pendingRecords()).toBe(1);
      await t.store.applyReceipt(receipt('D1', 'DELIVERED', 3_000));
      await t.store.applyReceipt(receipt('F1', 'FAILED', 3_100, 'stat:UNDELIV err:034'));
      expect(await t.store.expire(2_000)).toBe(1);
      expect(await t.store.pendingRecords()).toBe(4);

      const records = await t.store.takeRecords(10, 4_000);
      expect(records.map(shape)).toEqual([
        {
          messageId: 'r', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', finalAt: 2_100,
          message: { client: 'acme', upstream: 'up1', route: null, batchId: null, source: 'ACME', destination: '971500000001', acceptedAt: 1_000 },
          parts: [{ part: 1, smscId: null, bind: null, acceptedAt: null }],
        },
        {
          messageId: 'd', status: 'DELIVERED', reason: null, finalAt: 3_000,
          message: { client: 'acme', upstream: 'up1', route: null, batchId: null, source: 'ACME', destination: '971500000001', acceptedAt: 1_000 },
          parts: [{ part: 1, smscId: 'D1', bind: 'b1', acceptedAt: 2_000 }],
        },
        {
          messageId: 'f', status: 'FAILED', reason: 'stat:UNDELIV err:034', finalAt: 3_100,
          message: { client: 'acme', upstream: 'up1', route: null, batchId: null, source: 'ACME', destination: '971500000001', acceptedAt: 1_000 },
          parts: [{ part: 1, smscId: 'F1', bind: 'b1', acceptedAt: 2_000 }],
        },
        {
          messageId: 'x', status: 'FAILED', reason: expect.stringMatching(/expired/) as unknown as string, finalAt: 2_000,
          message: { client: 'acme', upstream: 'up1', route: null, batchId: null, source: 'ACME', destination: '971500000001', acceptedAt: 1_000 },
          parts: [{ part: 1, smscId: null, bind: null, acceptedAt: null }],
        },
      ]);
      // In the order they were queued.
      expect(records.map((r) => r.seq)).toEqual([...records.map((r) => r.seq)].sort((a, b) => a - b));
    });

    it('a READ after DELIVERED queues no second record; the record keeps its first final status', async () => {
      await claimed(['a']);
      await t.store.recordSubmit('a', [accepted(1, 'A1')], 2_000);
      await t.store.applyReceipt(receipt('A1', 'DELIVERED', 3_000));
      await t.store.applyReceipt(receipt('A1', 'READ', 4_000));
      expect((await t.store.getMessage('a'))?.status).toBe('READ');
      expect((await t.store.takeRecords(10, 5_000)).map((r) => [r.messageId, r.status, r.finalAt])).toEqual([['a', 'DELIVERED', 3_000]]);
    });

    it('a message of three parts has one record, its parts in order with their SMSC ids and binds', async () => {
      await claimed(['m'], { partCount: 3 });
      await t.store.recordSubmit('m', [accepted(1, 'M1', 'b1'), accepted(2, 'M2', 'b2')], 2_000);
      await t.store.recordSubmit('m', [accepted(3, 'M3', 'b1')], 2_100);
      for (const id of ['M2', 'M1']) await t.store.applyReceipt(receipt(id, 'DELIVERED', 3_000));
      expect(await t.store.pendingRecords()).toBe(0);
      await t.store.applyReceipt(receipt('M3', 'DELIVERED', 3_500));
      const [record] = await t.store.takeRecords(10, 4_000);
      expect(record?.parts).toEqual([
        { part: 1, smscId: 'M1', bind: 'b1', acceptedAt: 2_000 },
        { part: 2, smscId: 'M2', bind: 'b2', acceptedAt: 2_000 },
        { part: 3, smscId: 'M3', bind: 'b1', acceptedAt: 2_100 },
      ]);
      expect(record?.finalAt).toBe(3_500);
    });

    it('a take returns the oldest up to its limit and the same again until they are dropped; a restart keeps them', async () => {
      await claimed(['a', 'b', 'c']);
      for (const id of ['a', 'b', 'c']) {
        await t.store.recordSubmit(id, [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'no', attempts: 1 }], 2_000);
      }
      const first = await t.store.takeRecords(2, 3_000);
      expect(first.map((r) => r.messageId)).toEqual(['a', 'b']);
      expect((await t.store.takeRecords(2, 3_000)).map((r) => r.messageId)).toEqual(['a', 'b']);
      await t.reopen();
      expect(await t.store.pendingRecords()).toBe(3);
      expect(await t.store.dropRecords(first.map((r) => r.seq))).toBe(2);
      expect(await t.store.dropRecords(first.map((r) => r.seq))).toBe(0);
      expect((await t.store.takeRecords(2, 3_000)).map((r) => r.messageId)).toEqual(['c']);
      expect(await t.store.pendingRecords()).toBe(1);
    });

    it('retention keeps a message while its record is queued, and deletes it once the record is dropped', async () => {
      await claimed(['a']);
      await t.store.recordSubmit('a', [accepted(1, 'A1')], 2_000);
      await t.store.applyReceipt(receipt('A1', 'DELIVERED', 3_000));
      // Its SUBMITTED, SENT and DELIVERED events keep it too: delivered and gone.
      for (;;) {
        const events = await t.store.claimEvents('acme', 4_000, 100, 100_000);
        if (events.length === 0) break;
        await t.store.settleEvents(events.map((e) => ({ id: e.id, kind: 'delivered' as const })), 4_000);
      }
      expect((await t.store.pruneFinished(100_000, 100)).messages).toBe(0);
      expect(await t.store.getMessage('a')).toBeDefined();
      const records = await t.store.takeRecords(10, 5_000);
      await t.store.dropRecords(records.map((r) => r.seq));
      expect((await t.store.pruneFinished(100_000, 100)).messages).toBe(1);
      expect(await t.store.getMessage('a')).toBeUndefined();
    });
  });

  describe('message records, off', () => {
    const t = storePerTest(factory);

    it('a store opened without records queues none', async () => {
      await t.store.accept({ messages: [newMessage('a')], now: 1_000 });
      await t.store.claim('up1', 1_000, 100);
      await t.store.recordSubmit('a', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'no', attempts: 1 }], 2_000);
      expect((await t.store.getMessage('a'))?.status).toBe('REJECTED');
      expect(await t.store.pendingRecords()).toBe(0);
      expect(await t.store.takeRecords(10, 3_000)).toEqual([]);
      expect(await t.rows('SELECT seq FROM message_records')).toEqual([]);
    });
  });
}
