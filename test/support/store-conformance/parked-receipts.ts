import { describe, expect, it } from 'vitest';
import type { DeliveryStatus } from '../../../src/sms/status.js';
import type { ParkedDropped, ReceiptRecord } from '../../../src/store/receipts.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

function receipt(keys: string[], status: DeliveryStatus | null, over: Partial<ReceiptRecord> = {}): ReceiptRecord {
  return { upstream: 'up1', keys, status, reason: null, raw: { text: `id:${keys[0] ?? ''} stat:DELIVRD` }, receivedAt: 5_000, ...over };
}

const accepted = (part: number, smscId: string) =>
  ({ part, kind: 'accepted' as const, smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 });

const sorted = (dropped: ParkedDropped[]) => [...dropped].sort((a, b) => a.upstream.localeCompare(b.upstream) || a.reason.localeCompare(b.reason));

export function describeParkedReceipts(factory: StoreFactory): void {
  describe('the parking of receipts that came before their submit_sm_resp, bounded', () => {
    const t = storePerTest(factory);

    const parkedKeys = async (upstream: string) => (await t.rows<{ key: string }>(
      'SELECT k.key FROM parked_receipt_keys k JOIN parked_receipts r ON r.id = k.parked_id WHERE r.upstream = $1 ORDER BY k.key', [upstream])).map((r) => r.key);

    /** A message of up1 sent now, its part given `smscId`: a receipt parked under that key is applied. */
    async function sentWithKey(id: string, smscId: string, now = 9_500): Promise<void> {
      await t.store.accept({ messages: [newMessage(id)], now });
      await t.store.claim('up1', now, 10);
      await t.store.recordSubmit(id, [accepted(1, smscId)], now + 100);
    }

    it('a receipt that names no id is dropped, never parked: nothing could ever unpark it', async () => {
      expect(await t.store.applyReceipt(receipt([], 'DELIVERED'))).toEqual({ kind: 'dropped', reason: 'no_id' });
      expect(await t.store.applyReceipt(receipt([], null, { upstream: 'up2' }))).toEqual({ kind: 'dropped', reason: 'no_id' });
      expect((await t.store.counts()).parked).toBe(0);
      expect(await t.rows('SELECT id FROM parked_receipts')).toEqual([]);
    });

    it('parked receipts older than their upstream\'s cut-off are dropped with their keys; newer ones still match', async () => {
      expect(await t.store.applyReceipt(receipt(['old1'], 'DELIVERED', { receivedAt: 1_000 }))).toEqual({ kind: 'parked' });
      expect(await t.store.applyReceipt(receipt(['new1'], 'DELIVERED', { receivedAt: 9_000 }))).toEqual({ kind: 'parked' });
      expect(await t.store.pruneParked([{ upstream: 'up1', before: 5_000, max: 100 }], 0)).toEqual([{ upstream: 'up1', reason: 'age', count: 1 }]);
      expect(await parkedKeys('up1')).toEqual(['new1']);
      expect((await t.rows('SELECT COUNT(*) AS n FROM parked_receipt_keys'))[0]).toEqual({ n: 1 });
      expect((await t.store.counts()).parked).toBe(1);
      await sentWithKey('n', 'NEW1');
      expect((await t.store.getMessage('n'))!.status).toBe('DELIVERED');
      await sentWithKey('o', 'OLD1');
      expect((await t.store.getMessage('o'))!.status).toBe('SENT');
    });

    it('past an upstream\'s max the oldest are dropped and counted (ties in arrival by id); another upstream keeps its own', async () => {
      for (const [key, at] of [['a1', 1_000], ['a2', 2_000], ['a3', 3_000], ['a4', 3_000], ['a5', 4_000]] as const) {
        await t.store.applyReceipt(receipt([key, `${key}-dec`], 'DELIVERED', { receivedAt: at }));
      }
      for (const key of ['b1', 'b2']) await t.store.applyReceipt(receipt([key], 'DELIVERED', { upstream: 'up2', receivedAt: 500 }));
      const dropped = await t.store.pruneParked([{ upstream: 'up1', before: 0, max: 3 }, { upstream: 'up2', before: 0, max: 3 }], 0);
      expect(dropped).toEqual([{ upstream: 'up1', reason: 'cap', count: 2 }]);
      // a3 and a4 came at the same millisecond: a4 was parked later, so a3 is the older.
      expect(await parkedKeys('up1')).toEqual(['a3', 'a3-dec', 'a4', 'a4-dec', 'a5', 'a5-dec']);
      expect(await parkedKeys('up2')).toEqual(['b1', 'b2']);
      expect((await t.rows('SELECT COUNT(*) AS n FROM parked_receipt_keys'))[0]).toEqual({ n: 8 });
      expect((await t.store.counts()).parked).toBe(5);
      await sentWithKey('kept', 'A3');
      expect((await t.store.getMessage('kept'))!.status).toBe('DELIVERED');
      await sentWithKey('gone', 'A2');
      expect((await t.store.getMessage('gone'))!.status).toBe('SENT');
      // Within the bounds now: a second prune drops nothing.
      expect(await t.store.pruneParked([{ upstream: 'up1', before: 0, max: 3 }, { upstream: 'up2', before: 0, max: 3 }], 0)).toEqual([]);
    });

    it('age first, then the cap: each receipt dropped is counted once, under one reason', async () => {
      for (let i = 1; i <= 6; i++) await t.store.applyReceipt(receipt([`k${i}`], 'DELIVERED', { receivedAt: i * 1_000 }));
      const dropped = await t.store.pruneParked([{ upstream: 'up1', before: 2_500, max: 2 }], 0);
      expect(sorted(dropped)).toEqual([{ upstream: 'up1', reason: 'age', count: 2 }, { upstream: 'up1', reason: 'cap', count: 2 }]);
      expect(await parkedKeys('up1')).toEqual(['k5', 'k6']);
    });

    it('max 0 drops every parked receipt of the upstream', async () => {
      for (let i = 1; i <= 3; i++) await t.store.applyReceipt(receipt([`k${i}`], 'DELIVERED', { receivedAt: 9_000 + i }));
      expect(await t.store.pruneParked([{ upstream: 'up1', before: 0, max: 0 }], 0)).toEqual([{ upstream: 'up1', reason: 'cap', count: 3 }]);
      expect((await t.store.counts()).parked).toBe(0);
      expect((await t.rows('SELECT COUNT(*) AS n FROM parked_receipt_keys'))[0]).toEqual({ n: 0 });
    });

    it('receipts of upstreams the limits do not name are dropped only once parked before otherBefore, and counted per upstream', async () => {
      await t.store.applyReceipt(receipt(['g1'], 'DELIVERED', { upstream: 'gone', receivedAt: 1_000 }));
      await t.store.applyReceipt(receipt(['g2'], 'DELIVERED', { upstream: 'gone', receivedAt: 2_000 }));
      await t.store.applyReceipt(receipt(['g3'], 'DELIVERED', { upstream: 'gone', receivedAt: 9_000 }));
      await t.store.applyReceipt(receipt(['o1'], 'DELIVERED', { upstream: 'other', receivedAt: 1_000 }));
      await t.store.applyReceipt(receipt(['u1'], 'DELIVERED', { receivedAt: 1_000 }));
      const dropped = await t.store.pruneParked([{ upstream: 'up1', before: 0, max: 10 }], 5_000);
      expect(sorted(dropped)).toEqual([{ upstream: 'gone', reason: 'age', count: 2 }, { upstream: 'other', reason: 'age', count: 1 }]);
      expect(await parkedKeys('gone')).toEqual(['g3']);
      expect(await parkedKeys('up1')).toEqual(['u1']);
    });

    it('an empty parking prunes to nothing', async () => {
      expect(await t.store.pruneParked([{ upstream: 'up1', before: 10_000, max: 0 }], 10_000)).toEqual([]);
      expect(await t.store.pruneParked([], 10_000)).toEqual([]);
    });
  });
}
