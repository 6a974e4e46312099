import { describe, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { DeliveryStatus } from '../../../src/sms/status.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import { newMessage } from '../sqlite-store.js';
import { changeEvents, statusEvents, storePerTest, type StoreFactory } from './harness.js';

function receipt(keys: string[], status: DeliveryStatus | null, over: Partial<ReceiptRecord> = {}): ReceiptRecord {
  const stat = status === 'DELIVERED' ? 'DELIVRD' : status ?? 'BUFFRED';
  return { upstream: 'up1', keys, status, reason: null, raw: { text: `id:${keys[0] ?? ''} stat:${stat}`, stat }, receivedAt: 5_000, ...over };
}

const accepted = (part: number, smscId: string, bind = 'b1') =>
  ({ part, kind: 'accepted' as const, smscId, matchKey: smscId.toLowerCase(), bind, attempts: 1 });

export function describeSubmitAndReceipts(factory: StoreFactory): void {
  describe('submit outcomes, receipts and the outbox', () => {
    const t = storePerTest(factory);

    async function sent(id: string, partCount = 1): Promise<void> {
      await t.store.accept({ messages: [newMessage(id, { partCount })], now: 1_000 });
      await t.store.claim('up1', 1_000, 100);
    }

    const receiptRows = (messageId: string) =>
      t.rows<{ part: number; key: string; status: string | null; changed: number; ignored: string | null; raw: string }>(
        'SELECT part, key, status, changed, ignored, raw FROM receipts WHERE message_id = $1 ORDER BY id', [messageId]);

    it('an accepted part becomes SENT and done with its SMSC id; the message change writes one outbox event', async () => {
      await sent('a');
      await t.store.recordSubmit('a', [accepted(1, 'ABC1')], 2_000);
      expect(await t.store.getMessage('a')).toMatchObject({
        status: 'SENT', reason: null, updatedAt: 2_000,
        parts: [{ part: 1, status: 'SENT', smscMessageId: 'ABC1', reason: null, attempts: 1, updatedAt: 2_000 }],
      });
      // SUBMITTED (at accept) and SENT
      expect(await t.store.counts()).toEqual({ queued: 0, inflight: 0, parked: 0, outbox: 2, deadEvents: 0 });
      expect(await statusEvents(t.rows)).toEqual([{
        type: 'status', messageId: 'a', channel: 'sms', destination: '971500000001', status: 'SUBMITTED',
        timestamp: new Date(1_000).toISOString(), reason: null, batchId: null,
        part: null, parts: 1, smscMessageId: null, receipt: null,
      }, {
        type: 'status', messageId: 'a', channel: 'sms', destination: '971500000001', status: 'SENT',
        timestamp: new Date(2_000).toISOString(), reason: null, batchId: null,
        part: { part: 1, status: 'SENT', smscMessageId: 'ABC1' }, parts: 1, smscMessageId: 'ABC1', receipt: null,
      }]);
      const [row] = await t.rows('SELECT kind, message_id, client, upstream, state, attempts, created_at, queued_at, next_attempt_at FROM outbox ORDER BY id DESC LIMIT 1');
      expect(row).toEqual({
        // Behind the SUBMITTED, still undelivered: blocked until that one is delivered or dies.
        kind: 'status', message_id: 'a', client: 'acme', upstream: 'up1', state: 'blocked', attempts: 0, created_at: 2_000, queued_at: 2_000, next_attempt_at: 2_000,
      });
    });

    it('a message of three parts is SENT once every part is; one event, naming the last part', async () => {
      await sent('a', 3);
      await t.store.recordSubmit('a', [accepted(1, 'X1'), accepted(2, 'X2')], 2_000);
      expect((await t.store.getMessage('a'))?.status).toBe('SUBMITTED');
      expect(await changeEvents(t.rows)).toEqual([]);
      await t.store.recordSubmit('a', [accepted(3, 'X3')], 2_100);
      expect((await t.store.getMessage('a'))?.status).toBe('SENT');
      expect((await changeEvents(t.rows)).map((e) => [e.status, e.part])).toEqual([['SENT', { part: 3, status: 'SENT', smscMessageId: 'X3' }]]);
    });

    it('a final submit outcome makes the part and message REJECTED with its reason', async () => {
      await sent('a', 2);
      await t.store.recordSubmit('a', [
        { part: 1, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', attempts: 1 },
        { part: 2, kind: 'final', status: 'FAILED', reason: 'retries exhausted', attempts: 3 },
      ], 2_000);
      const m = await t.store.getMessage('a');
      expect(m).toMatchObject({ status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)' });
      expect(m?.parts.map((p) => [p.status, p.attempts])).toEqual([['REJECTED', 1], ['FAILED', 3]]);
      // the first final status of the message stays: one event
      expect((await changeEvents(t.rows)).map((e) => [e.status, e.reason])).toEqual([['REJECTED', 'ESME_RINVDSTADR (0x0000000B)']]);
    });

    it('a repeated submit outcome for a part already done changes nothing', async () => {
      await sent('a');
      await t.store.recordSubmit('a', [accepted(1, 'A1')], 2_000);
      await t.store.recordSubmit('a', [{ part: 1, kind: 'final', status: 'FAILED', reason: 'late', attempts: 2 }], 2_001);
      expect((await t.store.getMessage('a'))?.parts[0]).toMatchObject({ status: 'SENT', smscMessageId: 'A1', attempts: 1 });
      expect(await changeEvents(t.rows)).toHaveLength(1);
    });

    it('an unknown message or part is an error, and nothing of that call is kept (outbox in the same transaction)', async () => {
      await sent('a', 2);
      const missingMessage = await t.store.recordSubmit('zzz', [accepted(1, 'Z')], 2_000).catch((e: unknown) => e);
      expect(isSmppdError(missingMessage, 'INTERNAL')).toBe(true);
      const missingPart = await t.store.recordSubmit('a', [accepted(1, 'A1'), accepted(2, 'A2'), accepted(9, 'A9')], 2_000).catch((e: unknown) => e);
      expect(isSmppdError(missingPart, 'INTERNAL')).toBe(true);
      expect((await t.store.getMessage('a'))?.parts.map((p) => p.status)).toEqual(['SUBMITTED', 'SUBMITTED']);
      expect(await t.store.counts()).toMatchObject({ inflight: 2, outbox: 1 }); // its SUBMITTED only
    });

    it('a receipt read before its submit outcome was recorded is dated no earlier than the SENT it follows', async () => {
      await sent('a');
      // The receipt was read at 1_900; the submit_sm_resp it follows was recorded at 2_000.
      await t.store.recordSubmit('a', [accepted(1, 'T1')], 2_000);
      await t.store.applyReceipt(receipt(['t1'], 'DELIVERED', { receivedAt: 1_900 }));
      expect((await changeEvents(t.rows)).map((e) => [e.status, e.timestamp])).toEqual([
        ['SENT', new Date(2_000).toISOString()], ['DELIVERED', new Date(2_000).toISOString()],
      ]);
      expect((await receiptRows('a'))[0]).toMatchObject({ status: 'DELIVERED' });
      expect((await t.rows('SELECT received_at FROM receipts'))[0]).toEqual({ received_at: 1_900 });
    });

    it('a receipt finds its part by key on any bind of the upstream and moves it to DELIVERED', async () => {
      await sent('a');
      await t.store.recordSubmit('a', [accepted(1, 'ABC1', 'bind-1')], 2_000);
      const applied = await t.store.applyReceipt(receipt(['nomatch', 'abc1'], 'DELIVERED', { raw: { stat: 'DELIVRD', via: 'bind-2' } }));
      expect(applied).toEqual({ kind: 'matched', messageId: 'a', part: 1, key: 'abc1', changed: true });
      expect(await t.store.getMessage('a')).toMatchObject({ status: 'DELIVERED', updatedAt: 5_000, parts: [{ status: 'DELIVERED', updatedAt: 5_000 }] });
      const events = await changeEvents(t.rows, 'a');
      expect(events.map((e) => e.status)).toEqual(['SENT', 'DELIVERED']);
      expect(events[1]).toMatchObject({ receipt: { stat: 'DELIVRD', via: 'bind-2' }, smscMessageId: 'ABC1', timestamp: new Date(5_000).toISOString() });
      expect(await receiptRows('a')).toEqual([{ part: 1, key: 'abc1', status: 'DELIVERED', changed: 1, ignored: null, raw: '{"stat":"DELIVRD","via":"bind-2"}' }]);
    });

    it('the first key that matches wins when several would', async () => {
      await sent('a');
      await sent('b');
      await t.store.recordSubmit('a', [accepted(1, 'K1')], 2_000);
      await t.store.recordSubmit('b', [accepted(1, 'K2')], 2_000);
      expect(await t.store.applyReceipt(receipt(['k2', 'k1'], 'DELIVERED'))).toMatchObject({ messageId: 'b', key: 'k2' });
    });

    it('a receipt of another upstream does not match: it is parked', async () => {
      await sent('a');
      await t.store.recordSubmit('a', [accepted(1, 'K1')], 2_000);
      expect(await t.store.applyReceipt(receipt(['k1'], 'DELIVERED', { upstream: 'up2' }))).toEqual({ kind: 'parked' });
      expect((await t.store.getMessage('a'))?.status).toBe('SENT');
      expect((await t.store.counts()).parked).toBe(1);
    });

    it('duplicate, regressing, after-final and unreadable receipts change nothing but are kept raw', async () => {
      await sent('a');
      await t.store.recordSubmit('a', [accepted(1, 'K1')], 2_000);
      await t.store.applyReceipt(receipt(['k1'], 'DELIVERED'));
      const ignored = [
        await t.store.applyReceipt(receipt(['k1'], 'DELIVERED', { receivedAt: 6_000 })),
        await t.store.applyReceipt(receipt(['k1'], 'SENT', { receivedAt: 6_001 })),
        await t.store.applyReceipt(receipt(['k1'], 'FAILED', { reason: 'stat:UNDELIV err:001', receivedAt: 6_002 })),
        await t.store.applyReceipt(receipt(['k1'], null, { receivedAt: 6_003 })),
      ];
      expect(ignored.map((r) => r.kind === 'matched' && r.changed)).toEqual([false, false, false, false]);
      expect((await receiptRows('a')).map((r) => [r.status, r.changed, r.ignored])).toEqual([
        ['DELIVERED', 1, null],
        ['DELIVERED', 0, 'duplicate'],
        ['SENT', 0, 'regression'],
        ['FAILED', 0, 'after_final'],
        [null, 0, 'unknown'],
      ]);
      expect(await t.store.getMessage('a')).toMatchObject({ status: 'DELIVERED', updatedAt: 5_000 });
      expect((await changeEvents(t.rows)).map((e) => e.status)).toEqual(['SENT', 'DELIVERED']);
    });

    it('READ after DELIVERED moves on; a message of two parts is DELIVERED only when both are', async () => {
      await sent('a', 2);
      await t.store.recordSubmit('a', [accepted(1, 'P1'), accepted(2, 'P2')], 2_000);
      await t.store.applyReceipt(receipt(['p1'], 'DELIVERED', { receivedAt: 3_000 }));
      expect((await t.store.getMessage('a'))?.status).toBe('SENT');
      await t.store.applyReceipt(receipt(['p2'], 'DELIVERED', { receivedAt: 3_100 }));
      await t.store.applyReceipt(receipt(['p1'], 'READ', { receivedAt: 3_200 }));
      await t.store.applyReceipt(receipt(['p2'], 'READ', { receivedAt: 3_300 }));
      expect((await changeEvents(t.rows)).map((e) => [e.status, (e.part as { part: number }).part])).toEqual([
        ['SENT', 2], ['DELIVERED', 2], ['READ', 2],
      ]);
    });

    it('a FAILED part fails the message with the receipt\'s reason; a later REJECTED part does not change it', async () => {
      await sent('a', 2);
      await t.store.recordSubmit('a', [accepted(1, 'P1'), accepted(2, 'P2')], 2_000);
      await t.store.applyReceipt(receipt(['p1'], 'FAILED', { reason: 'stat:UNDELIV err:034' }));
      await t.store.applyReceipt(receipt(['p2'], 'REJECTED', { reason: 'stat:REJECTD', receivedAt: 5_001 }));
      expect(await t.store.getMessage('a')).toMatchObject({ status: 'FAILED', reason: 'stat:UNDELIV err:034' });
      expect((await t.store.getMessage('a'))?.parts.map((p) => p.status)).toEqual(['FAILED', 'REJECTED']);
      expect((await changeEvents(t.rows)).map((e) => e.status)).toEqual(['SENT', 'FAILED']);
    });

    it('a receipt that came before its submit_sm_resp is parked, then applied when the submit is recorded', async () => {
      await sent('a');
      expect(await t.store.applyReceipt(receipt(['x-dec', 'k1'], 'DELIVERED', { receivedAt: 1_500 }))).toEqual({ kind: 'parked' });
      expect(await t.store.counts()).toMatchObject({ parked: 1, outbox: 1 }); // SUBMITTED
      const commits = t.store.stats.commits;
      await t.store.recordSubmit('a', [accepted(1, 'K1')], 2_000);
      expect(t.store.stats.commits).toBe(commits + 1);
      expect(await t.store.getMessage('a')).toMatchObject({ status: 'DELIVERED', parts: [{ status: 'DELIVERED', smscMessageId: 'K1' }] });
      expect(await t.store.counts()).toMatchObject({ parked: 0, outbox: 3 });
      expect((await changeEvents(t.rows)).map((e) => [e.status, e.timestamp])).toEqual([
        ['SENT', new Date(2_000).toISOString()], ['DELIVERED', new Date(2_000).toISOString()],
      ]);
      expect((await receiptRows('a')).map((r) => [r.key, r.status, r.changed])).toEqual([['k1', 'DELIVERED', 1]]);
      expect((await t.rows('SELECT COUNT(*) AS n FROM parked_receipt_keys'))[0]).toEqual({ n: 0 });
    });

    it('several parked receipts for one key are applied in the order they arrived', async () => {
      await sent('a');
      await t.store.applyReceipt(receipt(['k1'], 'SENT', { receivedAt: 1_100 }));
      await t.store.applyReceipt(receipt(['k1'], 'DELIVERED', { receivedAt: 1_200 }));
      await t.store.applyReceipt(receipt(['other'], 'DELIVERED', { receivedAt: 1_300 }));
      await t.store.recordSubmit('a', [accepted(1, 'K1')], 2_000);
      expect((await receiptRows('a')).map((r) => [r.status, r.ignored])).toEqual([['SENT', 'duplicate'], ['DELIVERED', null]]);
      expect((await t.store.getMessage('a'))?.status).toBe('DELIVERED');
      expect((await t.store.counts()).parked).toBe(1);
    });

    it('inbound messages are stored with an inbound outbox event', async () => {
      await t.store.recordInbound({ upstream: 'up1', client: 'acme', events: true, source: '971500000009', destination: 'ACME', text: 'STOP', dataCoding: 0, parts: 1, receivedAt: 7_000 });
      expect(await t.rows('SELECT id, upstream, client, source, destination, text, data_coding, parts, received_at FROM inbound')).toEqual([
        { id: 1, upstream: 'up1', client: 'acme', source: '971500000009', destination: 'ACME', text: 'STOP', data_coding: 0, parts: 1, received_at: 7_000 },
      ]);
      const rows = await t.rows<{ payload: string }>('SELECT kind, message_id, client, upstream, payload FROM outbox');
      expect(rows).toEqual([{ kind: 'inbound', message_id: null, client: 'acme', upstream: 'up1', payload: expect.any(String) }]);
      expect(JSON.parse(rows[0]!.payload)).toEqual({
        type: 'inbound', channel: 'sms', inboundId: 1, source: '971500000009', destination: 'ACME', text: 'STOP', receivedAt: new Date(7_000).toISOString(),
        parts: 1, missingParts: [], dataCoding: 0, malformed: false, problems: [], userData: null,
      });
      expect((await t.store.counts()).outbox).toBe(1);
    });

    it('an inbound message with no client, or for a client without a webhook, is stored without an event', async () => {
      await t.store.recordInbound({ upstream: 'up1', client: null, events: false, source: '1', destination: '2', text: 'a', dataCoding: 0, parts: 1, receivedAt: 7_000 });
      await t.store.recordInbound({ upstream: 'up1', client: 'acme', events: false, source: '1', destination: '2', text: 'b', dataCoding: 0, parts: 1, receivedAt: 7_001 });
      expect(await t.rows('SELECT client, text FROM inbound ORDER BY id')).toEqual([{ client: null, text: 'a' }, { client: 'acme', text: 'b' }]);
      expect((await t.store.counts()).outbox).toBe(0);
    });

    it('a message accepted with events off writes no event, at accept or after', async () => {
      await t.store.accept({ messages: [newMessage('q', { events: false })], now: 1_000 });
      await t.store.claim('up1', 1_000, 10);
      await t.store.recordSubmit('q', [accepted(1, 'Q1')], 2_000);
      await t.store.applyReceipt(receipt(['q1'], 'DELIVERED'));
      expect((await t.store.getMessage('q'))?.status).toBe('DELIVERED');
      expect(await statusEvents(t.rows)).toEqual([]);
    });

    it('every status change has its outbox row: rows equal changes', async () => {
      for (const id of ['a', 'b', 'c']) await sent(id);
      await t.store.recordSubmit('a', [accepted(1, 'A')], 2_000);
      await t.store.recordSubmit('b', [accepted(1, 'B')], 2_000);
      await t.store.recordSubmit('c', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'bad', attempts: 1 }], 2_000);
      await t.store.applyReceipt(receipt(['a'], 'DELIVERED'));
      await t.store.applyReceipt(receipt(['a'], 'DELIVERED'));
      await t.store.applyReceipt(receipt(['b'], 'FAILED', { reason: 'stat:EXPIRED' }));
      // a: SENT, DELIVERED; b: SENT, FAILED; c: REJECTED
      expect((await changeEvents(t.rows)).map((e) => `${e.messageId}:${e.status}`)).toEqual(['a:SENT', 'b:SENT', 'c:REJECTED', 'a:DELIVERED', 'b:FAILED']);
      expect((await t.store.counts()).outbox).toBe(8); // and the three SUBMITTED
    });
  });
}
