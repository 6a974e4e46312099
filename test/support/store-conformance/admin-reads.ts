import { describe, expect, it } from 'vitest';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const LEASE = 60_000;

const accepted = (part: number, smscId: string) => ({ part, kind: 'accepted' as const, smscId, matchKey: smscId.toLowerCase(), bind: 'up1#0', attempts: 1 });

function receipt(key: string, status: 'DELIVERED' | 'SENT', receivedAt: number): ReceiptRecord {
  const stat = status === 'DELIVERED' ? 'DELIVRD' : 'ENROUTE';
  return { upstream: 'up1', keys: [key], status, reason: `stat:${stat}`, raw: { text: `id:${key} stat:${stat}`, stat }, receivedAt };
}

export function describeAdminReads(factory: StoreFactory): void {
  describe('admin reads: suspended upstreams, the queue per upstream, message search and story', () => {
    const t = storePerTest(factory);

    it('keeps suspensions: the first stays on a repeat, a resume ends it, both survive a reopen', async () => {
      expect(await t.store.listSuspensions()).toEqual([]);
      const first = { upstream: 'up2', since: 1_000, by: 'ops', reason: 'maintenance' };
      expect(await t.store.suspendUpstream(first)).toEqual(first);
      expect(await t.store.suspendUpstream({ upstream: 'up2', since: 2_000, by: 'lead', reason: null })).toEqual(first);
      await t.store.suspendUpstream({ upstream: 'up1', since: 3_000, by: 'lead', reason: null });
      await t.reopen();
      expect(await t.store.listSuspensions()).toEqual([{ upstream: 'up1', since: 3_000, by: 'lead', reason: null }, first]);
      expect(await t.store.resumeUpstream('up1')).toBe(true);
      expect(await t.store.resumeUpstream('up1')).toBe(false);
      await t.reopen();
      expect(await t.store.listSuspensions()).toEqual([first]);
    });

    it('counts queued parts per upstream, held ones in, inflight and done ones out', async () => {
      expect(await t.store.queuedByUpstream()).toEqual([]);
      await t.store.accept({ messages: [newMessage('a', { partCount: 3 }), newMessage('b', { upstream: 'up2' }), newMessage('c', { upstream: 'up2', partCount: 2 })], now: 1 });
      await t.store.accept({
        messages: [newMessage('held')], batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
        schedule: { client: 'acme', runAt: 9_000, repeat: null }, now: 2,
      });
      expect((await t.store.claim('up2', 10, 1)).map((m) => m.id)).toEqual(['b']);
      expect(await t.store.queuedByUpstream()).toEqual([{ upstream: 'up1', queued: 4 }, { upstream: 'up2', queued: 2 }]);
      await t.store.recordSubmit('b', [accepted(1, 'B1')], 20);
      expect(await t.store.queuedByUpstream()).toEqual([{ upstream: 'up1', queued: 4 }, { upstream: 'up2', queued: 2 }]);
    });

    it('finds messages across clients, newest first, by destination, client, status and accept time, a page at a time', async () => {
      await t.store.accept({ messages: [newMessage('m1', { destination: '447700900001' }), newMessage('m2', { client: 'globex', destination: '447700900002' })], now: 1_000 });
      await t.store.accept({ messages: [newMessage('m3', { destination: '447700900001', partCount: 2 }), newMessage('m4', { client: 'globex', destination: '447700900001' })], now: 2_000 });
      await t.store.accept({ messages: [newMessage('m5', { destination: '447700900003' })], now: 3_000 });
      await t.store.claim('up1', 3_500, 10);
      await t.store.recordSubmit('m4', [accepted(1, 'M4')], 4_000);
      await t.store.applyReceipt(receipt('m4', 'DELIVERED', 5_000));
      const ids = (page: { messages: Array<{ id: string }> }) => page.messages.map((m) => m.id);

      expect(ids(await t.store.findMessages({ destination: '447700900001', limit: 10 }))).toEqual(['m4', 'm3', 'm1']);
      expect(ids(await t.store.findMessages({ client: 'globex', limit: 10 }))).toEqual(['m4', 'm2']);
      expect(ids(await t.store.findMessages({ status: 'DELIVERED', limit: 10 }))).toEqual(['m4']);
      expect(ids(await t.store.findMessages({ since: 2_000, until: 3_000, limit: 10 }))).toEqual(['m4', 'm3']);
      expect(ids(await t.store.findMessages({ destination: '447700900001', client: 'acme', since: 1_500, limit: 10 }))).toEqual(['m3']);
      expect(ids(await t.store.findMessages({ destination: '447700900009', limit: 10 }))).toEqual([]);

      // Pages: a full one says where the next begins; the last says none.
      const first = await t.store.findMessages({ limit: 2 });
      expect(ids(first)).toEqual(['m5', 'm4']);
      expect(first.next).not.toBeNull();
      const second = await t.store.findMessages({ limit: 2, after: first.next! });
      expect(ids(second)).toEqual(['m3', 'm2']);
      const third = await t.store.findMessages({ limit: 2, after: second.next! });
      expect(ids(third)).toEqual(['m1']);
      expect(third.next).toBeNull();
      const byNumber = await t.store.findMessages({ destination: '447700900001', limit: 2 });
      expect(ids(await t.store.findMessages({ destination: '447700900001', limit: 2, after: byNumber.next! }))).toEqual(['m1']);

      expect((await t.store.findMessages({ destination: '447700900001', limit: 1 })).messages[0]).toEqual({
        id: 'm4', client: 'globex', upstream: 'up1', source: 'ACME', destination: '447700900001', status: 'DELIVERED', reason: null,
        parts: 1, acceptedAt: 2_000, updatedAt: 5_000,
      });
      expect((await t.store.findMessages({ client: 'acme', destination: '447700900001', limit: 1 })).messages[0]).toMatchObject({ id: 'm3', parts: 2, status: 'SUBMITTED' });
    });

    it('tells one message\'s story: its parts with SMSC ids and sent times, every receipt (ignored ones too), its events', async () => {
      await t.store.accept({ messages: [newMessage('s', { partCount: 2, destination: '447700900001', route: 'uk' })], now: 1_000 });
      await t.store.claim('up1', 1_500, 10);
      await t.store.recordSubmit('s', [accepted(1, 'S1'), { part: 2, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', attempts: 1 }], 2_000);
      await t.store.applyReceipt(receipt('s1', 'DELIVERED', 3_000));
      await t.store.applyReceipt(receipt('s1', 'SENT', 4_000));
      expect(await t.store.messageStory('nope')).toBeUndefined();
      const story = (await t.store.messageStory('s'))!;
      expect(story.message).toEqual({
        id: 's', client: 'acme', upstream: 'up1', route: 'uk', batchId: null, source: 'ACME', destination: '447700900001', text: 'hello', encoding: 'GSM-7',
        status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', acceptedAt: 1_000, updatedAt: 3_000,
      });
      expect(story.parts).toEqual([
        { part: 1, state: 'done', status: 'DELIVERED', reason: 'stat:DELIVRD', smscId: 'S1', bind: 'up1#0', attempts: 1, sentAt: 2_000, updatedAt: 3_000 },
        { part: 2, state: 'done', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', smscId: null, bind: null, attempts: 1, sentAt: null, updatedAt: 2_000 },
      ]);
      expect(story.receipts).toEqual([
        { part: 1, status: 'DELIVERED', reason: 'stat:DELIVRD', ignored: null, receivedAt: 3_000 },
        { part: 1, status: 'SENT', reason: 'stat:ENROUTE', ignored: expect.any(String) as string, receivedAt: 4_000 },
      ]);
      // Its events wait in the outbox (nobody delivers them here), oldest first: the later one behind the first.
      expect(story.events).toEqual([
        {
          id: expect.any(Number) as number, kind: 'status', status: 'SUBMITTED', state: 'pending', attempts: 0, createdAt: 1_000, nextAttemptAt: 1_000,
          deliveredAt: null, lastError: null,
        },
        {
          id: expect.any(Number) as number, kind: 'status', status: 'REJECTED', state: 'blocked', attempts: 0, createdAt: 2_000, nextAttemptAt: 2_000,
          deliveredAt: null, lastError: null,
        },
      ]);
    });

    it('tells every event of the message: delivered ones with their time and sends, dead ones with their last error, waiting ones', async () => {
      await t.store.accept({ messages: [newMessage('e'), newMessage('other')], now: 1_000 });
      await t.store.claim('up1', 1_500, 10);
      await t.store.recordSubmit('e', [accepted(1, 'E1')], 2_000);
      await t.store.applyReceipt(receipt('e1', 'DELIVERED', 3_000));
      await t.store.recordInbound({
        upstream: 'up1', client: 'acme', events: true, source: '447700900123', destination: '12345', text: 'STOP', dataCoding: 0, parts: 1, receivedAt: 3_500,
      });
      const head = async (now: number) => (await t.store.claimEvents('acme', now, 10, now + LEASE)).filter((e) => e.messageId === 'e');
      // SUBMITTED fails once (the others' events are given back), then is delivered, in one settle with the other message's and the inbound event.
      const first = await t.store.claimEvents('acme', 4_000, 10, 4_000 + LEASE);
      const submitted = first.find((e) => e.messageId === 'e');
      await t.store.settleEvents(first.map((e) => (e === submitted ? { id: e.id, kind: 'retry' as const, at: 4_500, error: 'HTTP 502' } : { id: e.id, kind: 'release' as const })), 4_100);
      const due = await t.store.claimEvents('acme', 4_500, 10, 4_500 + LEASE);
      expect(due.map((e) => e.kind).sort()).toEqual(['inbound', 'status', 'status']);
      await t.store.settleEvents(due.map((e) => ({ id: e.id, kind: 'delivered' as const })), 4_600);
      // SENT dies; DELIVERED is next.
      const [sent] = await head(4_700);
      await t.store.settleEvents([{ id: sent!.id, kind: 'dead', error: 'HTTP 500' }], 4_700);

      const story = (await t.store.messageStory('e'))!;
      expect(story.events.map((e) => e.id)).toEqual([submitted!.id, sent!.id, expect.any(Number) as number]);
      expect(story.events).toEqual([
        { id: submitted!.id, kind: 'status', status: 'SUBMITTED', state: 'delivered', attempts: 2, createdAt: 1_000, nextAttemptAt: null, deliveredAt: 4_600, lastError: 'HTTP 502' },
        { id: sent!.id, kind: 'status', status: 'SENT', state: 'dead', attempts: 1, createdAt: 2_000, nextAttemptAt: expect.any(Number) as number, deliveredAt: null, lastError: 'HTTP 500' },
        { id: expect.any(Number) as number, kind: 'status', status: 'DELIVERED', state: 'pending', attempts: 0, createdAt: 3_000, nextAttemptAt: 4_700, deliveredAt: null, lastError: null },
      ]);
      // Each message's story tells its own events; the inbound event (of no message) is not logged.
      expect((await t.store.messageStory('other'))!.events).toMatchObject([{ status: 'SUBMITTED', state: 'delivered', attempts: 1, deliveredAt: 4_600, lastError: null }]);
      expect(await t.rows('SELECT message_id, attempts FROM event_deliveries ORDER BY event_id')).toEqual([
        { message_id: 'e', attempts: 2 }, { message_id: 'other', attempts: 1 },
      ]);
      // The log outlives a restart, and a delivered event is logged once.
      await t.reopen();
      const [last] = await head(5_000);
      await t.store.settleEvents([{ id: last!.id, kind: 'delivered' }, { id: last!.id, kind: 'delivered' }], 5_100);
      expect((await t.store.messageStory('e'))!.events.filter((e) => e.state === 'delivered').map((e) => [e.status, e.deliveredAt])).toEqual([
        ['SUBMITTED', 4_600], ['DELIVERED', 5_100],
      ]);
    });
  });
}
