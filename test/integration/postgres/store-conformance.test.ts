/**
 * The SQLite store's behaviour tests (test/unit/store/accept-claim.test.ts and
 * recovery-expiry.test.ts) run against PostgresStore: the same scenarios under the same names,
 * inspected through SQL; a "crash" is a close and an open with the same instance id.
 * Keep them in step: a scenario added there is added here under the same name.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isSmppdError } from '../../../src/core/errors.js';
import type { NewBatch } from '../../../src/store/store.js';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newMessage, partBody } from '../../support/sqlite-store.js';
import { changeEvents, describePg, pgSchema, pgStorePerTest, type PgSchema } from './pg-store.js';

const bulk: NewBatch = { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: 'spring' };

describePg('PostgresStore accept and claim', () => {
  let schema: PgSchema;
  let store: PostgresStore;
  beforeEach(async () => {
    schema = await pgSchema();
    store = await schema.open();
  });
  afterEach(async () => schema.cleanup());

  it('readySince: when the part a claim would take first became ready; null when nothing may go', async () => {
    expect(await store.readySince('up1', 5_000)).toBeNull();
    await store.accept({ messages: [newMessage('a'), newMessage('b')], now: 1_000 });
    expect(await store.readySince('up1', 5_000)).toBe(1_000);
    await store.claim('up1', 2_000, 1);
    expect(await store.readySince('up1', 5_000)).toBe(1_000); // b, accepted with a
    await store.claim('up1', 2_000, 1);
    expect(await store.readySince('up1', 5_000)).toBeNull();
    await store.accept({ messages: [newMessage('later', { notBefore: 9_000 })], now: 3_000 });
    expect(await store.readySince('up1', 5_000)).toBeNull();
    expect(await store.readySince('up1', 9_500)).toBe(9_000);
  });

  it('accept stores messages SUBMITTED with every part queued', async () => {
    expect(await store.accept({ messages: [newMessage('a', { partCount: 3 }), newMessage('b')], now: 1_000 }))
      .toEqual({ batchId: null, scheduleId: null });
    const a = await store.getMessage('a');
    expect(a).toMatchObject({ messageId: 'a', client: 'acme', upstream: 'up1', batchId: null, status: 'SUBMITTED', reason: null, createdAt: 1_000 });
    expect(a?.parts.map((p) => [p.part, p.status, p.smscMessageId, p.attempts])).toEqual([
      [1, 'SUBMITTED', null, 0], [2, 'SUBMITTED', null, 0], [3, 'SUBMITTED', null, 0],
    ]);
    // one SUBMITTED event per message
    expect(await store.counts()).toEqual({ queued: 4, inflight: 0, parked: 0, outbox: 2, deadEvents: 0 });
    expect(await store.queueDepth()).toBe(4);
    expect(await store.getMessage('nope')).toBeUndefined();
  });

  it('accept with a batch sets its total; appending by batchId grows it', async () => {
    const { batchId } = await store.accept({ messages: [newMessage('a'), newMessage('b')], batch: bulk, now: 1 });
    expect(batchId).toEqual(expect.any(Number));
    await store.accept({ messages: [newMessage('c')], batchId: batchId!, now: 2 });
    expect(await store.getBatch('acme', batchId!)).toMatchObject({
      id: batchId, client: 'acme', senderId: 'ACME', reqType: 'bulk', campaignName: 'spring', state: 'active',
      total: 3, processed: 0, pending: 3, createdAt: 1, scheduleId: null,
    });
    expect((await store.getMessage('c'))?.batchId).toBe(batchId);
  });

  it('appending to a batch that does not exist, or is another client\'s, is BATCH_NOT_FOUND', async () => {
    const { batchId } = await store.accept({ messages: [newMessage('a')], batch: bulk, now: 1 });
    const missing = await store.accept({ messages: [newMessage('b')], batchId: 4242, now: 2 }).catch((e: unknown) => e);
    expect(isSmppdError(missing, 'BATCH_NOT_FOUND')).toBe(true);
    const other = await store.accept({ messages: [newMessage('c', { client: 'globex' })], batchId: batchId!, now: 2 }).catch((e: unknown) => e);
    expect(isSmppdError(other, 'BATCH_NOT_FOUND')).toBe(true);
    expect(await store.getMessage('c')).toBeUndefined();
  });

  it('claim hands out the oldest messages first, all their queued parts in order, and makes them inflight', async () => {
    const sar = { refNum: 300, total: 2, seq: 1 };
    await store.accept({ messages: [newMessage('old', { partCount: 2 })], now: 1 });
    await store.accept({
      messages: [
        newMessage('mid', { parts: [partBody('x', { sar, messagePayload: Buffer.from([1, 2, 3]) }), partBody('y')] }),
        newMessage('new'),
      ],
      now: 2,
    });
    const first = await store.claim('up1', 10, 2);
    expect(first.map((m) => m.id)).toEqual(['old', 'mid']);
    expect(first[0]).toMatchObject({
      id: 'old', upstream: 'up1', source: 'ACME', destination: '971500000001', registeredDelivery: 1,
      sourceTon: 5, sourceNpi: 0, destTon: 1, destNpi: 1, validityPeriod: '',
    });
    expect(first[0]?.parts.map((p) => [p.part, p.shortMessage.toString('latin1'), p.esmClass, p.sar?.seq])).toEqual([
      [1, 'part 1', 0x40, 1], [2, 'part 2', 0x40, 2],
    ]);
    expect(first[1]?.parts[0]).toEqual({ part: 1, attempts: 0, dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('x'), sar, messagePayload: Buffer.from([1, 2, 3]) });
    expect(first[1]?.parts[1]).toEqual({ part: 2, attempts: 0, dataCoding: 0, esmClass: 0, shortMessage: Buffer.from('y') });
    expect(await store.queueDepth()).toBe(1);
    expect(await store.counts()).toMatchObject({ queued: 1, inflight: 4 });

    expect((await store.claim('up1', 10, 10)).map((m) => m.id)).toEqual(['new']);
    expect(await store.claim('up1', 10, 10)).toEqual([]);
  });

  it('claim takes only its upstream\'s messages', async () => {
    await store.accept({ messages: [newMessage('a', { upstream: 'up2' }), newMessage('b')], now: 1 });
    expect((await store.claim('up1', 10, 10)).map((m) => m.id)).toEqual(['b']);
    expect((await store.claim('up2', 10, 10)).map((m) => m.id)).toEqual(['a']);
  });

  it('claim waits for notBefore and skips expired messages', async () => {
    await store.accept({
      messages: [
        newMessage('later', { notBefore: 5_000 }),
        newMessage('expired', { expiresAt: 999 }),
        newMessage('now', { expiresAt: 1_000 }),
      ],
      now: 1,
    });
    expect((await store.claim('up1', 1_000, 10)).map((m) => m.id)).toEqual(['now']);
    expect(await store.claim('up1', 4_999, 10)).toEqual([]);
    expect((await store.claim('up1', 5_000, 10)).map((m) => m.id)).toEqual(['later']);
  });

  it('a requeued message keeps its place: once eligible again it goes before newer ones', async () => {
    await store.accept({ messages: [newMessage('a')], now: 1 });
    await store.claim('up1', 10, 10);
    await store.accept({ messages: [newMessage('b')], now: 2 });
    await store.recordSubmit('a', [{ part: 1, kind: 'requeue', notBefore: 500 }], 20);
    expect((await store.claim('up1', 100, 10)).map((m) => m.id)).toEqual(['b']);
    await store.recordSubmit('b', [{ part: 1, kind: 'requeue', notBefore: 0 }], 101);
    expect((await store.claim('up1', 500, 10)).map((m) => m.id)).toEqual(['a', 'b']);
  });

  it('claim returns only the parts not yet done when some were requeued', async () => {
    await store.accept({ messages: [newMessage('a', { partCount: 3 })], now: 1 });
    await store.claim('up1', 10, 10);
    await store.recordSubmit('a', [
      { part: 1, kind: 'accepted', smscId: 'S1', matchKey: 's1', bind: 'b1', attempts: 1 },
      { part: 2, kind: 'requeue', notBefore: 50 },
      { part: 3, kind: 'requeue', notBefore: 50 },
    ], 20);
    const [again] = await store.claim('up1', 50, 10);
    expect(again?.parts.map((p) => p.part)).toEqual([2, 3]);
  });

  it('claim with limit 0 claims nothing', async () => {
    await store.accept({ messages: [newMessage('a')], now: 1 });
    expect(await store.claim('up1', 10, 0)).toEqual([]);
    expect((await store.counts()).queued).toBe(1);
  });
});

const UNCERTAIN = 'uncertain: daemon stopped while the submit_sm was outstanding';

describePg('PostgresStore recovery of inflight parts and expiry', () => {
  const t = pgStorePerTest();

  /** Claims, then "crashes": the store is closed with parts inflight and opened again (same instance id). */
  async function crashWithInflight(): Promise<void> {
    await t.store.accept({ messages: [newMessage('a', { partCount: 2 }), newMessage('b', { upstream: 'up2' }), newMessage('waiting')], now: 1 });
    await t.store.claim('up1', 10, 1);
    await t.store.claim('up2', 10, 1);
    await t.store.close();
    t.store = await t.schema.open();
  }

  it('resend: parts left inflight go back to the queue and are claimed again, oldest first', async () => {
    await crashWithInflight();
    expect(await t.store.counts()).toMatchObject({ queued: 1, inflight: 3 });
    expect(await t.store.recoverInflight({ up1: 'resend', up2: 'resend' }, 100)).toBe(3);
    expect(await t.store.counts()).toMatchObject({ queued: 4, inflight: 0 });
    expect((await t.store.claim('up1', 101, 10)).map((m) => [m.id, m.parts.length])).toEqual([['a', 2], ['waiting', 1]]);
    expect((await t.store.getMessage('a'))?.status).toBe('SUBMITTED');
    expect((await changeEvents(t.sql))).toEqual([]);
  });

  it('fail: parts left inflight become FAILED as uncertain, with their events', async () => {
    await crashWithInflight();
    expect(await t.store.recoverInflight({ up1: 'fail', up2: 'fail' }, 100)).toBe(3);
    expect(await t.store.getMessage('a')).toMatchObject({
      status: 'FAILED', reason: UNCERTAIN, parts: [{ status: 'FAILED', reason: UNCERTAIN }, { status: 'FAILED', reason: UNCERTAIN }],
    });
    expect((await changeEvents(t.sql)).map((e) => [e.messageId, e.status, e.reason])).toEqual([['a', 'FAILED', UNCERTAIN], ['b', 'FAILED', UNCERTAIN]]);
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
    expect((await changeEvents(t.sql)).map((e) => `${e.messageId}:${e.status}`)).toEqual(['old:FAILED', 'half:FAILED']);
    expect(await t.store.expire(1_002)).toBe(0);
    expect((await t.store.claim('up1', 1_002, 10)).map((m) => m.id)).toEqual(['fresh', 'forever']);
  });
});
