import { describe, expect, it } from 'vitest';
import type { PartResult } from '../../../src/store/claims.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import type { PruneCounts, PruneCursor } from '../../../src/store/retention.js';
import { RECEIPT_WAIT_WITHOUT_VALIDITY_MS } from '../../../src/store/rules/retention.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const LEASE = 60_000;
/** Everything the scenarios make happens before this, unless a scenario says otherwise. */
const CUTOFF = 10_000;

function accepted(part: number, smscId: string): PartResult {
  return { part, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 };
}

function delivered(key: string, receivedAt: number): ReceiptRecord {
  return { upstream: 'up1', keys: [key.toLowerCase()], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD' }, receivedAt };
}

const inbound = (over: { client: string | null; events: boolean; receivedAt: number; text?: string }) => ({
  upstream: 'up1', source: '447700900123', destination: '12345', text: over.text ?? 'STOP', dataCoding: 0, parts: 1, ...over,
});

export function describeRetention(factory: StoreFactory): void {
  describe('retention: pruneFinished', () => {
    const t = storePerTest(factory);

    /** Accepted at `at`, submitted (every part done, SENT) and delivered (a receipt per part) at `at + 1_000`; without events unless told. */
    async function finished(ids: string[], o: { at?: number; partCount?: number; events?: boolean; client?: string; batchId?: number } = {}): Promise<void> {
      const at = o.at ?? 1_000;
      const partCount = o.partCount ?? 1;
      await t.store.accept({
        messages: ids.map((id) => newMessage(id, { partCount, events: o.events ?? false, client: o.client ?? 'acme' })),
        now: at, ...(o.batchId !== undefined ? { batchId: o.batchId } : {}),
      });
      await t.store.claim('up1', at, 100);
      for (const id of ids) {
        await t.store.recordSubmit(id, Array.from({ length: partCount }, (_, i) => accepted(i + 1, `${id}-${i + 1}`)), at + 1_000);
        for (let i = 1; i <= partCount; i++) await t.store.applyReceipt(delivered(`${id}-${i}`, at + 1_000));
      }
    }

    /** Calls until the sweep is over; the counts summed. */
    async function sweep(before: number, limit = 1_000): Promise<Omit<PruneCounts, 'next'> & { calls: number }> {
      const total = { messages: 0, batches: 0, inbound: 0, calls: 0 };
      let after: PruneCursor | null = null;
      do {
        const c: PruneCounts = await t.store.pruneFinished(before, limit, after);
        total.messages += c.messages;
        total.batches += c.batches;
        total.inbound += c.inbound;
        total.calls++;
        after = c.next;
      } while (after !== null);
      return total;
    }

    const count = async (sql: string, params: unknown[] = []) => Number((await t.rows<{ n: number }>(sql, params))[0]?.n);
    const messageIds = async () => (await t.rows<{ id: string }>('SELECT id FROM messages ORDER BY seq')).map((r) => r.id);

    it('deletes a finished message older than the cutoff with its parts and receipts; newer ones, parked receipts and the outbox stay', async () => {
      await finished(['old'], { partCount: 2 });
      await finished(['new'], { at: 20_000 });
      await finished(['evented'], { at: 30_000, events: true });
      await t.store.applyReceipt({ upstream: 'up1', keys: ['nobody'], status: 'DELIVERED', reason: null, raw: {}, receivedAt: 500 });
      expect(await count("SELECT COUNT(*) AS n FROM receipts WHERE message_id = 'old'")).toBe(2);

      expect(await t.store.pruneFinished(CUTOFF, 1_000)).toEqual({ messages: 1, batches: 0, inbound: 0, next: null });
      expect(await t.store.getMessage('old')).toBeUndefined();
      for (const table of ['parts', 'receipts']) expect(await count(`SELECT COUNT(*) AS n FROM ${table} WHERE message_id = 'old'`), table).toBe(0);
      expect(await messageIds()).toEqual(['new', 'evented']);
      expect((await t.store.getMessage('new'))?.status).toBe('DELIVERED');
      // Parked receipts have their own prune; outbox rows are never deleted here.
      expect(await t.store.counts()).toMatchObject({ parked: 1, outbox: 3 });
      // Nothing more to do: a second sweep deletes nothing.
      expect(await sweep(CUTOFF)).toEqual({ messages: 0, batches: 0, inbound: 0, calls: 1 });
    });

    it('keeps a SENT message while its receipt may come (its validity, or a week without one), then for the retention; one that asked for none goes', async () => {
      const WEEK = RECEIPT_WAIT_WITHOUT_VALIDITY_MS;
      await t.store.accept({
        messages: [
          newMessage('no-validity', { events: false }),
          newMessage('one-hour', { events: false, expiresAt: 1_000 + 3_600_000 }),
          newMessage('no-receipt', { events: false, registeredDelivery: 0 }),
        ],
        now: 1_000,
      });
      await t.store.claim('up1', 1_000, 100);
      for (const id of ['no-validity', 'one-hour', 'no-receipt']) await t.store.recordSubmit(id, [accepted(1, `${id}-1`)], 2_000);

      expect(await sweep(CUTOFF)).toMatchObject({ messages: 1 });
      expect(await messageIds()).toEqual(['no-validity', 'one-hour']);
      // Sent at 2,000 with a validity of one hour: waited for until 3,602,000, then retention counts.
      expect(await sweep(2_000 + 3_600_000)).toMatchObject({ messages: 0 });
      expect(await sweep(2_000 + 3_600_000 + 1)).toMatchObject({ messages: 1 });
      expect(await messageIds()).toEqual(['no-validity']);
      // A late receipt still finds the message it belongs to, not the parking.
      expect(await t.store.applyReceipt(delivered('no-validity-1', 2_000 + WEEK - 1))).toMatchObject({ kind: 'matched', messageId: 'no-validity' });
      expect(await sweep(2_000 + WEEK)).toMatchObject({ messages: 1 });
      expect(await messageIds()).toEqual([]);
    });

    it('keeps a message with an event in the outbox, pending or dead; once its events are delivered it goes, with their log', async () => {
      await finished(['pending'], { events: true });
      await finished(['dead'], { events: true, client: 'globex' });
      // globex's receiver is down: its events die, one after the other (kept, listable, re-sendable).
      for (let i = 0; i < 3; i++) {
        const [head] = await t.store.claimEvents('globex', 3_000 + i, 1, 3_000 + i + LEASE);
        await t.store.settleEvents([{ id: head!.id, kind: 'dead', error: 'HTTP 500' }], 3_000 + i);
      }
      expect(await t.store.counts()).toMatchObject({ outbox: 3, deadEvents: 3 });

      expect(await sweep(CUTOFF)).toMatchObject({ messages: 0 });
      expect(await messageIds()).toEqual(['pending', 'dead']);

      // acme's receiver takes its three events (SUBMITTED, SENT, DELIVERED).
      for (let i = 0; i < 3; i++) {
        const [head] = await t.store.claimEvents('acme', 4_000 + i, 1, 4_000 + i + LEASE);
        await t.store.settleEvents([{ id: head!.id, kind: 'delivered' }], 4_000 + i);
      }
      const logged = () => count('SELECT COUNT(*) AS n FROM event_deliveries WHERE message_id = $1', ['pending']);
      expect(await logged()).toBe(3);
      expect(await sweep(CUTOFF)).toMatchObject({ messages: 1 });
      expect(await messageIds()).toEqual(['dead']);
      // The log of its delivered events goes with it.
      expect(await logged()).toBe(0);
      expect((await t.store.listDeadEvents('globex', 10)).map((e) => e.messageId)).toEqual(['dead', 'dead', 'dead']);
    });

    it('keeps a message with a queued or inflight part', async () => {
      await t.store.accept({ messages: [newMessage('inflight'), newMessage('half', { partCount: 2 }), newMessage('queued')], now: 1_000 });
      await t.store.claim('up1', 1_000, 2);
      await t.store.recordSubmit('half', [accepted(1, 'half-1'), { part: 2, kind: 'requeue', notBefore: 1_500 }], 2_000);
      expect((await t.store.counts()).queued).toBe(2);
      expect(await sweep(CUTOFF)).toMatchObject({ messages: 0 });
      expect(await messageIds()).toEqual(['inflight', 'half', 'queued']);
    });

    it('keeps a message created before the cutoff but changed after it (a schedule sent late is still pollable)', async () => {
      await t.store.accept({ messages: [newMessage('late', { events: false, registeredDelivery: 0 })], now: 1_000 });
      await t.store.claim('up1', 1_000, 10);
      await t.store.recordSubmit('late', [accepted(1, 'late-1')], 50_000);
      expect(await sweep(CUTOFF)).toMatchObject({ messages: 0 });
      expect((await t.store.getMessage('late'))?.status).toBe('SENT');
      expect(await sweep(60_000)).toMatchObject({ messages: 1 });
      expect(await t.store.getMessage('late')).toBeUndefined();
    });

    it('looks at `limit` messages per call at most; the next call goes on after them, past the ones it keeps', async () => {
      // One accept: six messages with the same created_at (a bulk chunk), the first two kept.
      await t.store.accept({ messages: ['k1', 'k2', 'f1', 'f2', 'f3', 'f4'].map((id) => newMessage(id, { events: false, registeredDelivery: 0 })), now: 1_000 });
      await t.store.claim('up1', 1_000, 100);
      for (const id of ['f1', 'f2', 'f3', 'f4']) await t.store.recordSubmit(id, [accepted(1, `${id}-1`)], 2_000);

      const first = await t.store.pruneFinished(CUTOFF, 3);
      expect(first).toMatchObject({ messages: 1, next: { table: 'messages' } });
      expect(await messageIds()).toEqual(['k1', 'k2', 'f2', 'f3', 'f4']);
      const second = await t.store.pruneFinished(CUTOFF, 3, first.next);
      expect(second).toMatchObject({ messages: 3, next: { table: 'messages' } });
      // The last call finds no message after the cursor and walks batches and inbound messages with its budget.
      expect(await t.store.pruneFinished(CUTOFF, 3, second.next)).toEqual({ messages: 0, batches: 0, inbound: 0, next: null });
      expect(await messageIds()).toEqual(['k1', 'k2']);
      // A new sweep starts from the beginning: the kept ones are looked at again, once.
      expect(await sweep(CUTOFF, 2)).toEqual({ messages: 0, batches: 0, inbound: 0, calls: 2 });
    });

    it('deletes a batch with its schedule once no message is left in it and it is not scheduled', async () => {
      const bulk = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'GSM-7', campaignName: null };
      const emptied = (await t.store.accept({ messages: [], batch: bulk, now: 1_000 })).batchId!;
      await finished(['e1', 'e2'], { batchId: emptied });
      const keptMessage = (await t.store.accept({ messages: [newMessage('waiting')], batch: bulk, now: 1_000 })).batchId!;
      const scheduled = (await t.store.accept({ messages: [], batch: bulk, schedule: { client: 'acme', runAt: 99_000, repeat: null }, now: 1_000 })).batchId!;
      const cancelled = await t.store.accept({ messages: [], batch: bulk, schedule: { client: 'acme', runAt: 99_000, repeat: null }, now: 1_000 });
      await t.store.setScheduleState('acme', cancelled.scheduleId!, 'cancelled', 2_000);
      const recent = (await t.store.accept({ messages: [], batch: bulk, now: 20_000 })).batchId!;

      // Messages first, then the batches they left empty, in the same sweep.
      expect(await sweep(CUTOFF)).toMatchObject({ messages: 2, batches: 2 });
      expect((await t.store.listBatches('acme')).map((b) => b.id).sort((a, b) => a - b)).toEqual([keptMessage, scheduled, recent]);
      expect((await t.store.listSchedules('acme')).map((s) => s.batchId)).toEqual([scheduled]);
      expect(await t.store.getBatch('acme', emptied)).toBeUndefined();
    });

    it('deletes an inbound message once it has no event in the outbox', async () => {
      await t.store.recordInbound(inbound({ client: null, events: false, receivedAt: 1_000, text: 'unrouted' }));
      await t.store.recordInbound(inbound({ client: 'acme', events: true, receivedAt: 1_000, text: 'delivered' }));
      await t.store.recordInbound(inbound({ client: 'globex', events: true, receivedAt: 1_000, text: 'dead' }));
      await t.store.recordInbound(inbound({ client: 'initech', events: true, receivedAt: 1_000, text: 'pending' }));
      await t.store.recordInbound(inbound({ client: null, events: false, receivedAt: 20_000, text: 'recent' }));
      const [toAcme] = await t.store.claimEvents('acme', 3_000, 1, 3_000 + LEASE);
      await t.store.settleEvents([{ id: toAcme!.id, kind: 'delivered' }], 3_000);
      const [toGlobex] = await t.store.claimEvents('globex', 3_000, 1, 3_000 + LEASE);
      await t.store.settleEvents([{ id: toGlobex!.id, kind: 'dead', error: 'HTTP 500' }], 3_000);

      expect(await sweep(CUTOFF)).toMatchObject({ messages: 0, batches: 0, inbound: 2 });
      expect((await t.rows<{ text: string }>('SELECT text FROM inbound ORDER BY id')).map((r) => r.text)).toEqual(['dead', 'pending', 'recent']);
      // The dead event can still be sent again: its payload holds the message.
      expect(await t.store.resendDeadEvents('globex', null, 4_000)).toEqual({ requeued: 1, superseded: 0 });
    });
  });
}
