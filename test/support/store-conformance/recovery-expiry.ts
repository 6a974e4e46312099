import { describe, expect, it } from 'vitest';
import { newMessage } from '../sqlite-store.js';
import { changeEvents, storePerTest, type StoreFactory } from './harness.js';

const UNCERTAIN = 'uncertain: daemon stopped while the submit_sm was outstanding';

export function describeRecoveryAndExpiry(factory: StoreFactory): void {
  describe('recovery of inflight parts and expiry', () => {
    const t = storePerTest(factory);

    /** Claims, then "crashes": the store is closed with parts inflight and opened again (for PostgreSQL, with the same instance id). */
    async function crashWithInflight(): Promise<void> {
      await t.store.accept({ messages: [newMessage('a', { partCount: 2 }), newMessage('b', { upstream: 'up2' }), newMessage('waiting')], now: 1 });
      await t.store.claim('up1', 10, 1);
      await t.store.claim('up2', 10, 1);
      await t.reopen();
    }

    /** What became of `write` within `ms`: 'fulfilled', 'rejected: <message>', or 'pending' (a write that never settles fails the scenario instead of hanging it). */
    function outcomeWithin(write: Promise<unknown>, ms: number): Promise<string> {
      return new Promise((resolve) => {
        const timer = t.clock.setTimer(ms, () => resolve('pending'));
        write.then(
          () => { timer.cancel(); resolve('fulfilled'); },
          (e: unknown) => { timer.cancel(); resolve(`rejected: ${(e as Error).message}`); },
        );
      });
    }

    it('resend: parts left inflight go back to the queue and are claimed again, oldest first', async () => {
      await crashWithInflight();
      expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 3 });
      expect(await t.store.recoverInflight({ up1: 'resend', up2: 'resend' }, 100)).toBe(3);
      expect(await t.store.counts()).toMatchObject({ queued: 4, inflight: 0 });
      expect((await t.store.claim('up1', 101, 10)).map((m) => [m.id, m.parts.length])).toEqual([['a', 2], ['waiting', 1]]);
      expect((await t.store.getMessage('a'))?.status).toBe('SUBMITTED');
      expect(await changeEvents(t.rows)).toEqual([]);
    });

    it('fail: parts left inflight become FAILED as uncertain, with their events', async () => {
      await crashWithInflight();
      expect(await t.store.recoverInflight({ up1: 'fail', up2: 'fail' }, 100)).toBe(3);
      expect(await t.store.getMessage('a')).toMatchObject({
        status: 'FAILED', reason: UNCERTAIN, parts: [{ status: 'FAILED', reason: UNCERTAIN }, { status: 'FAILED', reason: UNCERTAIN }],
      });
      expect((await changeEvents(t.rows)).map((e) => [e.messageId, e.status, e.reason])).toEqual([['a', 'FAILED', UNCERTAIN], ['b', 'FAILED', UNCERTAIN]]);
      // SUBMITTED of a, b and waiting, then FAILED of a and b
      expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 0, outbox: 5 });
    });

    it('the policy is per upstream', async () => {
      await crashWithInflight();
      const touched = await t.store.recoverInflight({ up1: 'resend', up2: 'fail' }, 100);
      expect(touched).toBe(3);
      expect((await t.store.getMessage('a'))?.status).toBe('SUBMITTED');
      expect((await t.store.getMessage('b'))?.status).toBe('FAILED');
      expect(await t.store.recoverInflight({ up1: 'fail', up2: 'fail' }, 101)).toBe(0);
    });

    it('an upstream the policies do not name resends', async () => {
      await crashWithInflight();
      expect(await t.store.recoverInflight({ up2: 'fail' }, 100)).toBe(3);
      expect((await t.store.getMessage('a'))?.status).toBe('SUBMITTED');
      expect((await t.store.getMessage('b'))?.status).toBe('FAILED');
    });

    // The contract part of the SQLite group commit's 'close commits what is queued' (group-commit.test.ts):
    // Store.close "flushes pending writes and closes".
    it('close commits the writes called before it; writes after close are refused', async () => {
      const writes = Array.from({ length: 10 }, (_, i) => t.store.accept({ messages: [newMessage(`m${i}`)], now: 1 }));
      await t.store.close();
      expect(await Promise.all(writes.map((w) => outcomeWithin(w, 2_000)))).toEqual(Array(10).fill('fulfilled'));
      expect(await outcomeWithin(t.store.accept({ messages: [newMessage('late')], now: 2 }), 2_000)).toMatch(/^rejected/);
      await t.reopen();
      expect((await t.store.counts()).queued).toBe(10);
      expect(await t.store.getMessage('late')).toBeUndefined();
    });

    it('expire fails the never-sent parts of messages past expiresAt; inflight parts and later messages are left', async () => {
      await t.store.accept({
        messages: [
          newMessage('old', { expiresAt: 1_000 }),
          newMessage('half', { expiresAt: 1_000, partCount: 2 }),
          newMessage('flying', { expiresAt: 1_000, upstream: 'up2' }),
          newMessage('fresh', { expiresAt: 9_000 }),
          newMessage('forever'),
        ],
        now: 1,
      });
      await t.store.claim('up2', 10, 10);
      // 'half' part 1 was sent, part 2 went back to the queue
      await t.store.claim('up1', 10, 2);
      await t.store.recordSubmit('old', [{ part: 1, kind: 'requeue', notBefore: 0 }], 11);
      await t.store.recordSubmit('half', [
        { part: 1, kind: 'accepted', smscId: 'H1', matchKey: 'h1', bind: 'b', attempts: 1 },
        { part: 2, kind: 'requeue', notBefore: 0 },
      ], 11);

      expect(await t.store.expire(1_000)).toBe(0);
      expect(await t.store.expire(1_001)).toBe(2);
      expect(await t.store.getMessage('old')).toMatchObject({ status: 'FAILED', reason: 'validity expired before submission' });
      expect(await t.store.getMessage('half')).toMatchObject({ status: 'FAILED', reason: 'validity expired before submission' });
      expect((await t.store.getMessage('half'))?.parts.map((p) => p.status)).toEqual(['SENT', 'FAILED']);
      expect((await t.store.getMessage('flying'))?.status).toBe('SUBMITTED');
      expect((await t.store.getMessage('fresh'))?.status).toBe('SUBMITTED');
      expect((await changeEvents(t.rows)).map((e) => `${e.messageId}:${e.status}`)).toEqual(['old:FAILED', 'half:FAILED']);
      expect(await t.store.expire(1_002)).toBe(0);
      expect((await t.store.claim('up1', 1_002, 10)).map((m) => m.id)).toEqual(['fresh', 'forever']);
    });
  });
}
