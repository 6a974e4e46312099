import { describe, expect, it } from 'vitest';
import type { PartResult } from '../../../src/store/claims.js';
import type { OutboxEvent } from '../../../src/store/outbox.js';
import type { ReceiptRecord } from '../../../src/store/receipts.js';
import { newMessage } from '../sqlite-store.js';
import { storePerTest, type StoreFactory } from './harness.js';

const LEASE = 60_000;

function accepted(part: number, smscId: string): PartResult {
  return { part, kind: 'accepted', smscId, matchKey: smscId.toLowerCase(), bind: 'b1', attempts: 1 };
}

function receipt(key: string, status: ReceiptRecord['status'], receivedAt = 5_000): ReceiptRecord {
  return { upstream: 'up1', keys: [key], status, reason: status === 'FAILED' ? 'stat:UNDELIV' : null, raw: { stat: String(status), key }, receivedAt };
}

const statuses = (events: OutboxEvent[]) => events.map((e) => `${e.messageId}:${(JSON.parse(e.payload) as { status: string }).status}`);

export function describeEventDelivery(factory: StoreFactory): void {
  describe('outbox delivery: claim, settle, dead events, re-push', () => {
    const t = storePerTest(factory);

    /** Messages accepted, claimed and SENT, so each has SUBMITTED and SENT events. */
    async function sentMessages(ids: string[], client = 'acme'): Promise<void> {
      await t.store.accept({ messages: ids.map((id) => newMessage(id, { client })), now: 1_000 });
      await t.store.claim('up1', 1_000, 100);
      for (const id of ids) await t.store.recordSubmit(id, [accepted(1, `S-${id}`)], 2_000);
    }

    it('a claim gives only the oldest undelivered event of each message, oldest first, and leases it', async () => {
      await sentMessages(['a', 'b']);
      const first = await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE);
      expect(statuses(first)).toEqual(['a:SUBMITTED', 'b:SUBMITTED']);
      expect(first[0]).toMatchObject({ kind: 'status', client: 'acme', attempts: 0, createdAt: 1_000, queuedAt: 1_000 });
      // Leased (and their SENT events held back behind them): nothing more to claim.
      expect(await t.store.claimEvents('acme', 3_001, 10, 3_001 + LEASE)).toEqual([]);
      // A lease that ran out gives the event back.
      expect(statuses(await t.store.claimEvents('acme', 3_000 + LEASE, 10, 3_000 + 2 * LEASE))).toEqual(['a:SUBMITTED', 'b:SUBMITTED']);
    });

    it('a later event waits as blocked, outside the due index, and is promoted when the one before is delivered or dies', async () => {
      await sentMessages(['a']);
      await t.store.applyReceipt(receipt('s-a', 'DELIVERED', 2_500));
      const states = async () => (await t.rows<{ state: string }>("SELECT state FROM outbox WHERE message_id = 'a' ORDER BY id")).map((r) => r.state);
      expect(await states()).toEqual(['pending', 'blocked', 'blocked']);
      const [submitted] = await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE);
      await t.store.settleEvents([{ id: submitted!.id, kind: 'dead', error: 'HTTP 500' }], 3_100);
      expect(await states()).toEqual(['dead', 'pending', 'blocked']);
      const [sent] = await t.store.claimEvents('acme', 3_100, 10, 3_100 + LEASE);
      await t.store.settleEvents([{ id: sent!.id, kind: 'delivered' }], 3_200);
      // SENT delivered: the dead SUBMITTED before it is superseded, DELIVERED is next.
      expect(await states()).toEqual(['pending']);
      expect(statuses(await t.store.claimEvents('acme', 3_200, 10, 3_200 + LEASE))).toEqual(['a:DELIVERED']);
    });

    it('a claim reads the due heads only: events waiting behind a failing head are not scanned', async () => {
      await sentMessages(Array.from({ length: 50 }, (_, i) => `m${i}`));
      // Every head fails and backs off: 50 heads out of the due range, 50 SENT blocked behind them.
      const heads = await t.store.claimEvents('acme', 3_000, 100, 3_000 + LEASE);
      expect(heads).toHaveLength(50);
      await t.store.settleEvents(heads.map((e) => ({ id: e.id, kind: 'retry' as const, at: 60_000, error: 'HTTP 503' })), 3_100);
      expect(await t.store.claimEvents('acme', 3_200, 100, 3_200 + LEASE)).toEqual([]);
      // The claim's condition names pending events only, and walks outbox_due (pending only) for them.
      expect(t.claimEventsSql).not.toContain('blocked');
      const plan = await t.dueEventsPlan('acme', 3_200);
      expect(plan).toContain('outbox_due');
      expect((await t.rows("SELECT COUNT(*) AS n FROM outbox WHERE state = 'pending' AND next_attempt_at <= 3200"))[0]).toEqual({ n: 0 });
      expect(await t.store.outboxDepth()).toEqual([{ client: 'acme', pending: 100, dead: 0 }]);
    });

    it('delivered events are removed and the next event of the message becomes claimable', async () => {
      await sentMessages(['a', 'b']);
      const [a] = await t.store.claimEvents('acme', 3_000, 1, 3_000 + LEASE);
      await t.store.settleEvents([{ id: a!.id, kind: 'delivered' }], 3_010);
      expect(statuses(await t.store.claimEvents('acme', 3_020, 10, 3_020 + LEASE))).toEqual(['b:SUBMITTED', 'a:SENT']);
      expect(await t.store.counts()).toMatchObject({ outbox: 3, deadEvents: 0 });
    });

    it('a retried event keeps the later events of its message back until it is delivered', async () => {
      await sentMessages(['a']);
      const [submitted] = await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE);
      await t.store.settleEvents([{ id: submitted!.id, kind: 'retry', at: 10_000, error: 'HTTP 500' }], 3_100);
      expect(await t.store.claimEvents('acme', 9_999, 10, 9_999 + LEASE)).toEqual([]);
      const [again] = await t.store.claimEvents('acme', 10_000, 10, 10_000 + LEASE);
      expect(again).toMatchObject({ id: submitted!.id, attempts: 1 });
      await t.store.settleEvents([{ id: again!.id, kind: 'delivered' }], 10_100);
      expect(statuses(await t.store.claimEvents('acme', 10_200, 10, 10_200 + LEASE))).toEqual(['a:SENT']);
    });

    it('a dead event lets the next one go; delivering that one removes the dead one (it can never be sent after it)', async () => {
      await sentMessages(['a']);
      const [submitted] = await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE);
      await t.store.settleEvents([{ id: submitted!.id, kind: 'dead', error: 'timeout' }], 3_100);
      expect(await t.store.listDeadEvents('acme', 10)).toEqual([{
        id: submitted!.id, kind: 'status', messageId: 'a', payload: submitted!.payload, createdAt: 1_000, attempts: 1, lastError: 'timeout', diedAt: 3_100,
      }]);
      const [sent] = await t.store.claimEvents('acme', 3_200, 10, 3_200 + LEASE);
      expect(statuses([sent!])).toEqual(['a:SENT']);
      expect(await t.store.settleEvents([{ id: sent!.id, kind: 'delivered' }], 3_300)).toEqual({ superseded: 1 });
      expect(await t.store.listDeadEvents('acme', 10)).toEqual([]);
      expect(await t.store.counts()).toMatchObject({ outbox: 0, deadEvents: 0 });
    });

    it('re-sending dead events queues them in order, unless a later event of the message is queued', async () => {
      await sentMessages(['a', 'b']);
      // a: both events die; b: SUBMITTED dies, SENT stays queued behind nothing.
      for (let round = 0; round < 2; round++) {
        const claimed = await t.store.claimEvents('acme', 3_000 + 100 * round, 10, 3_000 + 100 * round + LEASE);
        const outcomes = claimed.filter((e) => e.messageId === 'a' || round === 0).map((e) => ({ id: e.id, kind: 'dead' as const, error: 'HTTP 503' }));
        await t.store.settleEvents(outcomes, 3_050 + 100 * round);
        if (round === 1) {
          const bSent = claimed.find((e) => e.messageId === 'b');
          await t.store.settleEvents([{ id: bSent!.id, kind: 'release' }], 3_160);
        }
      }
      expect((await t.store.listDeadEvents('acme', 10)).map((e) => e.messageId)).toEqual(['a', 'b', 'a']);
      expect(await t.store.resendDeadEvents('other-client', null, 4_000)).toEqual({ requeued: 0, superseded: 0 });
      expect(await t.store.resendDeadEvents('acme', null, 4_000)).toEqual({ requeued: 2, superseded: 1 });
      const claimed = await t.store.claimEvents('acme', 4_000, 10, 4_000 + LEASE);
      expect(statuses(claimed)).toEqual(['b:SENT', 'a:SUBMITTED']);
      const aSubmitted = claimed.find((e) => e.messageId === 'a');
      expect(aSubmitted).toMatchObject({ attempts: 0, queuedAt: 4_000 });
    });

    it('re-sends only the dead events named, and only those of the asking client', async () => {
      await sentMessages(['a']);
      await sentMessages(['z'], 'zeta');
      const [a] = await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE);
      const [z] = await t.store.claimEvents('zeta', 3_000, 10, 3_000 + LEASE);
      await t.store.settleEvents([{ id: a!.id, kind: 'dead', error: 'x' }, { id: z!.id, kind: 'dead', error: 'x' }], 3_100);
      expect(await t.store.resendDeadEvents('acme', [z!.id], 4_000)).toEqual({ requeued: 0, superseded: 0 });
      // a's SENT is still queued: its dead SUBMITTED goes instead of coming back before it.
      expect(await t.store.resendDeadEvents('acme', [a!.id], 4_000)).toEqual({ requeued: 0, superseded: 1 });
      await t.store.recordInbound({ upstream: 'up1', client: 'acme', events: true, source: '1', destination: '2', text: 'hi', dataCoding: 0, parts: 1, receivedAt: 4_100 });
      const inbound = (await t.store.claimEvents('acme', 4_200, 10, 4_200 + LEASE)).find((e) => e.kind === 'inbound');
      await t.store.settleEvents([{ id: inbound!.id, kind: 'dead', error: 'x' }], 4_300);
      expect(await t.store.resendDeadEvents('acme', [inbound!.id], 4_400)).toEqual({ requeued: 1, superseded: 0 });
      expect(await t.store.outboxDepth()).toEqual([{ client: 'acme', pending: 2, dead: 0 }, { client: 'zeta', pending: 1, dead: 1 }]);
    });

    it('opening the store again gives back the leases of the process before', async () => {
      await sentMessages(['a']);
      expect(await t.store.claimEvents('acme', 3_000, 10, 3_000 + LEASE)).toHaveLength(1);
      // The restart happens before that lease would end: only giving it back makes the event due.
      t.clock.wall = 4_000;
      await t.reopen();
      expect(statuses(await t.store.claimEvents('acme', 4_000, 10, 4_000 + LEASE))).toEqual(['a:SUBMITTED']);
    });

    it('resendDlr queues the current status of each matching message, with its part and last receipt, page by page', async () => {
      await sentMessages(['a', 'b', 'c']);
      await t.store.applyReceipt(receipt('s-a', 'DELIVERED'));
      await t.store.applyReceipt(receipt('s-b', 'FAILED'));
      await t.store.accept({ messages: [newMessage('other-sender', { source: 'OTHER' })], now: 1_500 });
      await t.store.accept({ messages: [newMessage('later')], now: 90_000 });
      await t.store.accept({ messages: [newMessage('zeta', { client: 'zeta' })], now: 1_000 });
      const before = (await t.store.counts()).outbox;

      const filter = { client: 'acme', from: 1_000, to: 90_000, senderId: 'ACME' };
      const page1 = await t.store.resendStatusEvents(filter, 0, 2, 6_000);
      expect(page1.queued).toBe(2);
      const page2 = await t.store.resendStatusEvents(filter, page1.next!, 2, 6_000);
      expect(page2).toEqual({ queued: 1, next: null });
      expect((await t.store.counts()).outbox).toBe(before + 3);

      const rows = await t.rows<{ message_id: string; payload: string }>('SELECT message_id, payload, created_at FROM outbox WHERE created_at = 6000 ORDER BY id');
      const events = rows.map((r) => JSON.parse(r.payload) as Record<string, unknown>);
      expect(events.map((e) => [e.messageId, e.status, e.resent])).toEqual([['a', 'DELIVERED', true], ['b', 'FAILED', true], ['c', 'SENT', true]]);
      expect(events[0]).toEqual({
        type: 'status', messageId: 'a', channel: 'sms', destination: '971500000001', status: 'DELIVERED', timestamp: new Date(5_000).toISOString(),
        reason: null, batchId: null, part: { part: 1, status: 'DELIVERED', smscMessageId: 'S-a' }, parts: 1, smscMessageId: 'S-a',
        receipt: { stat: 'DELIVERED', key: 's-a' }, resent: true,
      });
      expect(events[1]).toMatchObject({ reason: 'stat:UNDELIV', receipt: { stat: 'FAILED' } });
      expect(events[2]).toMatchObject({ receipt: null, smscMessageId: 'S-c' });

      const onlyFailed = await t.store.resendStatusEvents({ ...filter, status: 'FAILED' }, 0, 100, 7_000);
      expect(onlyFailed).toEqual({ queued: 1, next: null });
    });

    it('a re-pushed event goes after the events its message still has queued', async () => {
      await sentMessages(['a']);
      await t.store.resendStatusEvents({ client: 'acme', from: 0, to: 10_000 }, 0, 10, 3_000);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const [e] = await t.store.claimEvents('acme', 4_000 + i, 10, 4_000 + i + LEASE);
        const p = JSON.parse(e!.payload) as { status: string; resent?: boolean };
        order.push(`${p.status}${p.resent ? ' (resent)' : ''}`);
        await t.store.settleEvents([{ id: e!.id, kind: 'delivered' }], 4_000 + i);
      }
      expect(order).toEqual(['SUBMITTED', 'SENT', 'SENT (resent)']);
    });
  });
}
