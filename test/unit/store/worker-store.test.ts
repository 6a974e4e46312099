import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { isSmppdError } from '../../../src/core/errors.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { SqliteWorkerStore } from '../../../src/store/sqlite/worker-store.js';
import { newMessage, partBody } from '../../support/sqlite-store.js';

describe('SqliteWorkerStore (the SQLite store on a worker thread)', () => {
  let dir: string;
  let path: string;
  const open: SqliteWorkerStore[] = [];
  const openStore = async (options: { records?: boolean } = {}): Promise<SqliteWorkerStore> => {
    const store = await SqliteWorkerStore.open({ path, ...options });
    open.push(store);
    return store;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'smppd-worker-store-'));
    path = join(dir, 'smppd.db');
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('carries a message from accept through claim, submit and receipt to DELIVERED, bodies as Buffers', async () => {
    const store = await openStore();
    const body = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x01, 0xff, 0x00, 0x80]);
    await store.accept({
      messages: [newMessage('m1', { parts: [partBody('x', { shortMessage: body }), partBody('y', { messagePayload: Buffer.from('payload') })] })],
      now: 1,
    });
    const [claimed] = await store.claim('up1', 2, 10);
    expect(claimed?.id).toBe('m1');
    const [first, second] = claimed!.parts;
    expect(Buffer.isBuffer(first?.shortMessage)).toBe(true);
    expect(first?.shortMessage.equals(body)).toBe(true);
    expect(Buffer.isBuffer(second?.messagePayload)).toBe(true);
    expect(second?.messagePayload?.toString()).toBe('payload');

    await store.recordSubmit('m1', [
      { part: 1, kind: 'accepted', smscId: 'a1', matchKey: 'a1', bind: 'b1', attempts: 1 },
      { part: 2, kind: 'accepted', smscId: 'a2', matchKey: 'a2', bind: 'b1', attempts: 1 },
    ], 3);
    const receipt = (key: string) => store.applyReceipt({ upstream: 'up1', keys: [key], status: 'DELIVERED', reason: null, raw: { stat: 'DELIVRD' }, receivedAt: 4 });
    expect(await receipt('a1')).toMatchObject({ kind: 'matched', messageId: 'm1', part: 1, changed: true });
    expect(await receipt('a2')).toMatchObject({ kind: 'matched', part: 2 });
    expect(await receipt('nobody')).toEqual({ kind: 'parked' });
    expect(await store.getMessage('m1')).toMatchObject({ status: 'DELIVERED', parts: [{ smscMessageId: 'a1' }, { smscMessageId: 'a2' }] });
    expect(await store.counts()).toMatchObject({ queued: 0, inflight: 0, parked: 1 });
    expect(await store.getMessage('none')).toBeUndefined();

    // The retention sweep's calls cross the thread boundary too, cursor and all (m1 is kept: its events are still in the outbox).
    const pruned = await store.pruneFinished(10, 1);
    expect(pruned).toEqual({ messages: 0, batches: 0, inbound: 0, next: { table: 'messages', at: 1, id: 1 } });
    expect(await store.pruneFinished(10, 1, pruned.next)).toEqual({ messages: 0, batches: 0, inbound: 0, next: null });
    expect((await store.getMessage('m1'))?.status).toBe('DELIVERED');
  });

  it('carries the bytes of MO parts and of an undecodable MO across the thread, stored as BLOBs', async () => {
    const store = await openStore();
    const part = (seq: number, hex: string) => ({
      upstream: 'up1', client: 'acme', events: true, source: '1', destination: '2', scheme: 'udh8' as const, ref: 9, total: 2, defaultAlphabet: 'gsm7' as const,
      piece: { seq, dataCoding: 8, body: Buffer.from(hex, 'hex'), udhInvalid: false }, receivedAt: seq,
    });
    expect(await store.recordInboundPart(part(1, '0048'))).toEqual({ kind: 'held', parts: 1 });
    expect(await store.recordInboundPart(part(1, '0048'))).toEqual({ kind: 'repeat' });
    expect(await store.recordInboundPart(part(2, '0069ff'))).toMatchObject({ kind: 'stored', parts: 2 });
    await store.recordInbound({
      upstream: 'up1', client: null, events: false, source: '1', destination: '2', text: '?', dataCoding: 0, parts: 1,
      problems: ['INVALID_BYTES'], raw: Buffer.from([0xff]), receivedAt: 3,
    });
    await store.close();
    const direct = await SqliteStore.open({ path, clock: new SystemClock() });
    expect(await direct.expireInboundParts(10, 10)).toEqual([]);
    await direct.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(path, { readonly: true });
    expect(db.prepare('SELECT text, problems, raw FROM inbound ORDER BY id').all()).toEqual([
      { text: 'Hi\ufffd', problems: 'UCS2_ODD_LENGTH', raw: Buffer.from('00480069ff', 'hex') },
      { text: '?', problems: 'INVALID_BYTES', raw: Buffer.from([0xff]) },
    ]);
    db.close();
  });

  it('lists and moves messages to another upstream across the thread, the new bodies and vendor TLVs stored as BLOBs', async () => {
    const store = await openStore();
    const tlv = (tag: number, text: string) => ({ tag, value: Buffer.from(text, 'latin1') });
    await store.accept({ messages: [newMessage('m1', { route: 'uk' }), newMessage('m2', { vendorTlvs: [tlv(0x1400, 'pe\0')] })], now: 1 });
    expect((await store.movable('up1', 1, 2)).map((m) => [m.id, m.route])).toEqual([['m1', 'uk']]);
    const body = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x02, 0x00, 0x41]);
    const moved = await store.move([{
      id: 'm1', from: 'up1', upstream: 'up2', encoding: 'UNICODE', registeredDelivery: 1, sourceTon: 5, sourceNpi: 0,
      parts: [partBody('x', { dataCoding: 8 }), partBody('y', { dataCoding: 8, shortMessage: body, messagePayload: Buffer.from('p') })],
      vendorTlvs: [tlv(0x3000, 'tpl\0')],
    }], 2);
    expect(moved).toEqual(['m1']);
    const [claimed] = await store.claim('up2', 3, 10);
    expect(claimed?.parts.map((p) => [p.part, Buffer.isBuffer(p.shortMessage), p.shortMessage.equals(body)])).toEqual([[1, true, false], [2, true, true]]);
    expect(claimed?.parts[1]?.messagePayload?.toString()).toBe('p');
    // The pool writes vendor TLVs with Buffer's copy: they come back Buffers.
    expect(claimed?.vendorTlvs?.map((t) => [t.tag, Buffer.isBuffer(t.value), t.value.toString('latin1')])).toEqual([[0x3000, true, 'tpl\0']]);
    const up1 = await store.claim('up1', 3, 10);
    expect(up1.map((m) => [m.id, m.vendorTlvs?.map((t) => [t.tag, Buffer.isBuffer(t.value), t.value.toString('latin1')])])).toEqual([['m2', [[0x1400, true, 'pe\0']]]]);
  });

  it('an SmppdError thrown in the worker reaches the caller with its code and details; other calls are unharmed', async () => {
    const store = await openStore();
    const { batchId } = await store.accept({
      messages: [newMessage('a')],
      batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
      now: 1,
    });
    await store.setBatchState('acme', batchId!, 'aborted', 2);
    const [refused, appended] = await Promise.allSettled([
      store.accept({ messages: [newMessage('b')], batchId: batchId!, now: 3 }),
      store.accept({ messages: [newMessage('c')], now: 3 }),
    ]);
    expect(refused.status).toBe('rejected');
    const error = refused.status === 'rejected' ? refused.reason as unknown : null;
    expect(isSmppdError(error, 'INVALID_STATE_TRANSITION')).toBe(true);
    expect((error as { details?: unknown }).details).toEqual({ batchId });
    expect(appended.status).toBe('fulfilled');
  });

  it('records, finds, finishes and prunes idempotency keys across the thread; a taken key keeps its code', async () => {
    const store = await openStore();
    const ref = { scope: 'http' as const, client: 'acme', key: 'k1' };
    const { batchId } = await store.accept({
      messages: [newMessage('b1')], batch: { client: 'acme', senderId: 'ACME', reqType: 'bulk', messageType: 'TEXT', campaignName: null },
      idempotencyKey: { ...ref, fingerprint: 'f', expiresAt: 100, pending: true }, now: 1,
    });
    expect(await store.findIdempotencyKey(ref, 2)).toMatchObject({ state: 'pending', batchId, owner: 'this' });
    const taken = await store.accept({ messages: [newMessage('m2')], idempotencyKey: { ...ref, fingerprint: 'f', expiresAt: 100 }, now: 2 }).catch((e: unknown) => e);
    expect(isSmppdError(taken, 'IDEMPOTENCY_KEY_IN_USE')).toBe(true);
    expect(await store.finishIdempotencyKey(ref, { status: 200, body: '{}' }, 3)).toBe(true);
    expect((await store.findIdempotencyKey(ref, 3))?.response).toEqual({ status: 200, body: '{}' });
    expect(await store.pruneIdempotencyKeys(100, 10)).toBe(1);
    expect(await store.findIdempotencyKey(ref, 3)).toBeUndefined();
  });

  it('queues, takes and drops the records of final messages across the thread, when opened with records', async () => {
    const store = await openStore({ records: true });
    await store.accept({ messages: [newMessage('m1'), newMessage('m2')], now: 1 });
    await store.claim('up1', 2, 10);
    await store.recordSubmit('m1', [{ part: 1, kind: 'final', status: 'REJECTED', reason: 'no', attempts: 1 }], 3);
    expect(await store.pendingRecords()).toBe(1);
    const records = await store.takeRecords(10, 4);
    expect(records.map((r) => [r.messageId, r.status, r.finalAt, r.message?.destination])).toEqual([['m1', 'REJECTED', 3, '971500000001']]);
    expect(await store.dropRecords(records.map((r) => r.seq))).toBe(1);
    expect(await store.pendingRecords()).toBe(0);
  });

  it('many concurrent writes all resolve, each after its commit', async () => {
    const store = await openStore();
    await Promise.all(Array.from({ length: 2000 }, (_, i) => store.accept({ messages: [newMessage(`m${i}`)], now: 1 })));
    expect((await store.queueDepth()).queued).toBe(2000);
  });

  it('close commits what was sent before it; the file then opens in this thread with every write in it', async () => {
    const store = await openStore();
    const writes = Array.from({ length: 50 }, (_, i) => store.accept({ messages: [newMessage(`m${i}`)], now: 1 }));
    await store.close();
    await Promise.all(writes);
    const late = await store.accept({ messages: [newMessage('late')], now: 2 }).catch((e: unknown) => e);
    expect(isSmppdError(late, 'INTERNAL')).toBe(true);
    const reopened = await SqliteStore.open({ path, clock: new SystemClock() });
    try {
      expect((await reopened.counts()).queued).toBe(50);
      expect(await reopened.getMessage('late')).toBeUndefined();
    } finally {
      await reopened.close();
    }
  });

  it('a worker that dies (here: out of memory) rejects what was pending and every later call, and says so once', async () => {
    const fatal: unknown[] = [];
    const store = await SqliteWorkerStore.open({ path }, { onFatal: (e) => fatal.push(e), resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 } });
    open.push(store);
    await store.accept({ messages: [newMessage('fits')], now: 1 });
    // Sent in one turn, these arrive in one message: 80 MB of text at once in a 16 MB heap.
    const huge = Array.from({ length: 8 }, (_, i) =>
      store.accept({ messages: [newMessage(`huge${i}`, { text: `${i}`.repeat(10_000_000) })], now: 2 }).catch((e: unknown) => e));
    for (const pending of await Promise.all(huge)) {
      expect(isSmppdError(pending, 'INTERNAL')).toBe(true);
      expect((pending as Error).message).toMatch(/store worker/);
    }
    const later = await store.getMessage('fits').catch((e: unknown) => e);
    expect(isSmppdError(later, 'INTERNAL')).toBe(true);
    expect(fatal).toHaveLength(1);
    // What was committed before is in the file.
    const reopened = await SqliteStore.open({ path, clock: new SystemClock() });
    try {
      expect((await reopened.getMessage('fits'))?.status).toBe('SUBMITTED');
      expect(await reopened.getMessage('huge0')).toBeUndefined();
    } finally {
      await reopened.close();
    }
  });

  it('a file that cannot be opened rejects open with the path, and leaves no worker behind', async () => {
    const refused = await SqliteWorkerStore.open({ path: join(dir, 'missing', 'smppd.db') }).catch((e: unknown) => e);
    expect(isSmppdError(refused, 'INTERNAL')).toBe(true);
    expect((refused as Error).message).toContain(join(dir, 'missing', 'smppd.db'));
  });
});
