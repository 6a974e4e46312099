/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) on POST /sms/sendSms and
 * POST /sms/sendbulk: a repeat is answered what the first was (the same message id, the same
 * sendbulk status and body), whether the first finished, failed after its commit or is still
 * running; another body with the key is 422; a key that breaks the rule is 400; a key expires
 * after http.idempotencyHours and is swept with retention.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RetentionSweep } from '../../../src/dispatch/retention.js';
import { silentLog } from '../../../src/core/log.js';
import type { AcceptRequest } from '../../../src/store/intake.js';
import { ERROR_FIELDS, TOKENS, bearer, bulkForm, httpHarness, multipart, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness({ bulkChunkSize: 2 });
});
afterEach(async () => {
  await h.close();
});

const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };
const bulkRequest = { senderId: 'MyBrand', message: 'Sale today', messageType: 'TEXT' };
const FILE = '447700900001\n447700900002\n447700900003\n';
const HOUR = 3_600_000;

function send(body: unknown, key?: string, token: string = TOKENS.app): Promise<LightMyRequestResponse> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return h.app.inject({
    method: 'POST', url: '/sms/sendSms', payload,
    headers: { ...bearer(token), 'content-type': 'application/json', ...(key !== undefined ? { 'idempotency-key': key } : {}) },
  });
}

function upload(form: { payload: Buffer; headers: Record<string, string> }, key?: string): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method: 'POST', url: '/sms/sendbulk', payload: form.payload,
    headers: { ...form.headers, ...bearer(), ...(key !== undefined ? { 'idempotency-key': key } : {}) },
  });
}

function expectError(res: LightMyRequestResponse, status: number, errorCode: string, text: string, requestUri = '/sms/sendSms'): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status, errorCode, requestUri });
  expect(body.message).toContain(text);
}

const messageCount = () => h.acceptedMessages.length;
const batches = () => h.store.listBatches('app');

/** Makes the store's next accepts fail: `when` 'before' the commit (nothing stored) or 'after' it (stored, the caller told it failed). */
function failAccepts(count: number, when: 'before' | 'after'): void {
  const accept = h.store.accept.bind(h.store);
  let left = count;
  h.store.accept = async (r: AcceptRequest) => {
    if (left > 0 && when === 'before') {
      left--;
      throw new Error('SQLITE_BUSY: database is locked');
    }
    const accepted = await accept(r);
    if (left > 0) {
      left--;
      throw new Error('the connection was lost after COMMIT');
    }
    return accepted;
  };
}

describe('Idempotency-Key on POST /sms/sendSms', () => {
  it('a repeat is answered the first message id and stores nothing; the same JSON in another order or layout is the same request', async () => {
    const first = await send(valid, 'order-1');
    expect(first.statusCode, first.body).toBe(200);
    const again = await send(valid, 'order-1');
    expect(again.statusCode).toBe(200);
    expect(again.headers['content-type']).toMatch(/^text\/plain/);
    expect(again.body).toBe(first.body);
    const reordered = `{ "messageType": "TEXT",\n  "message": "Hello", "destinationNumber": "447700900123", "senderId": "MyBrand" }`;
    expect((await send(reordered, 'order-1')).body).toBe(first.body);
    // Quoted as the draft's Structured Field String, it is the same key.
    expect((await send(valid, '"order-1"')).body).toBe(first.body);
    expect(messageCount()).toBe(1);
    // Without a key, or with another, it is a new message.
    expect((await send(valid)).body).not.toBe(first.body);
    expect((await send(valid, 'order-2')).body).not.toBe(first.body);
    expect(messageCount()).toBe(3);
  });

  it('keys are per client: another client\'s request with the same key is its own', async () => {
    const mine = await send(valid, 'k');
    const theirs = await send(valid, 'k', TOKENS.other);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.body).not.toBe(mine.body);
    expect((await h.store.getMessage(theirs.body))?.client).toBe('other');
  });

  it('the same key with another body is 422 IDEMPOTENCY_KEY_REUSED, five fields, and stores nothing', async () => {
    await send(valid, 'order-1');
    const res = await send({ ...valid, message: 'Hello again' }, 'order-1');
    expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED', 'used with another request');
    expect(res.json().error).toBe('Unprocessable Content');
    expect(messageCount()).toBe(1);
  });

  it('concurrent requests with one key store one message and all answer its id', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => send(valid, 'burst')));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(messageCount()).toBe(1);
  });

  it('a request whose commit happened but whose answer failed: its repeat is answered the id it committed', async () => {
    failAccepts(1, 'after');
    const failed = await send(valid, 'lost-answer');
    expectError(failed, 500, 'INTERNAL', 'internal error');
    expect(messageCount()).toBe(1);
    const again = await send(valid, 'lost-answer');
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(h.acceptedMessages[0]?.id);
    expect(messageCount()).toBe(1);
  });

  it('a request refused before its commit records nothing: its repeat is sent', async () => {
    failAccepts(1, 'before');
    expectError(await send(valid, 'retry-me'), 500, 'INTERNAL', 'internal error');
    const again = await send(valid, 'retry-me');
    expect(again.statusCode).toBe(200);
    expect(await h.store.getMessage(again.body)).toMatchObject({ status: 'SUBMITTED' });
    expect(messageCount()).toBe(1);
  });

  it('a scheduled send is answered its id again after its time has passed', async () => {
    const time = new Date(h.clock.wallNow() + 2 * HOUR).toISOString().slice(0, 19).replace('T', ' ');
    const scheduled = { ...valid, isSchedule: true, time, gmt: '+00:00' };
    const first = await send(scheduled, 'later');
    expect(first.statusCode, first.body).toBe(200);
    h.clock.advance(3 * HOUR);
    expect((await send(scheduled, 'later')).body).toBe(first.body);
  });

  it('a key that breaks the rule is 400 VALIDATION naming the header; nothing is stored', async () => {
    for (const bad of ['', 'x'.repeat(256), 'caf\u00e9', 'tab\there', '"unterminated\\"', '"bad \\n escape"']) {
      expectError(await send(valid, bad), 400, 'VALIDATION', 'Idempotency-Key: ');
    }
    expect((await send(valid, 'x'.repeat(255))).statusCode).toBe(200);
    expect((await send(valid, 'with space and !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')).statusCode).toBe(200);
    expect(messageCount()).toBe(2);
  });

  it('a key expires after http.idempotencyHours (24): then the request is new; the retention sweep deletes it', async () => {
    const first = await send(valid, 'daily');
    h.clock.advance(24 * HOUR - 1);
    expect((await send(valid, 'daily')).body).toBe(first.body);
    h.clock.advance(1);
    const next = await send({ ...valid, message: 'another body, as the key is free' }, 'daily');
    expect(next.statusCode).toBe(200);
    expect(next.body).not.toBe(first.body);
    await send(valid, 'other-key');
    h.clock.advance(24 * HOUR);
    const swept = await new RetentionSweep({ store: h.store, clock: h.clock, log: silentLog, retentionDays: 30 }).sweep();
    expect(swept.idempotencyKeys).toBe(2);
    // Gone from the store: the same key is free for any body.
    expect((await send(valid, 'daily')).statusCode).toBe(200);
    expect(messageCount()).toBe(4);
  });
});

describe('Idempotency-Key on POST /sms/sendbulk', () => {
  it('a repeat is answered the same status and body, one batch stored; parts in the other order are the same request', async () => {
    const first = await upload(bulkForm(bulkRequest, FILE), 'upload-1');
    expect(first.statusCode, first.body).toBe(200);
    const again = await upload(bulkForm(bulkRequest, FILE), 'upload-1');
    expect(again.statusCode).toBe(200);
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.body).toBe(first.body);
    const fileFirst = multipart([
      { name: 'destinationNumberFile', value: FILE, filename: 'other-name.txt' },
      { name: 'bulkRequest', value: JSON.stringify({ messageType: 'TEXT', message: 'Sale today', senderId: 'MyBrand' }) },
    ]);
    expect((await upload(fileFirst, 'upload-1')).body).toBe(first.body);
    expect(await batches()).toHaveLength(1);
    expect(messageCount()).toBe(3);
  });

  it('another file, or another bulkRequest, with the key is 422; a sendSms key is not a sendbulk key', async () => {
    await upload(bulkForm(bulkRequest, FILE), 'upload-1');
    expectError(await upload(bulkForm(bulkRequest, `${FILE}447700900004\n`), 'upload-1'), 422, 'IDEMPOTENCY_KEY_REUSED', 'another request', '/sms/sendbulk');
    expectError(await upload(bulkForm({ ...bulkRequest, message: 'Sale tomorrow' }, FILE), 'upload-1'), 422, 'IDEMPOTENCY_KEY_REUSED', 'another request', '/sms/sendbulk');
    await send(valid, 'single');
    expectError(await upload(bulkForm(bulkRequest, FILE), 'single'), 422, 'IDEMPOTENCY_KEY_REUSED', 'another request', '/sms/sendbulk');
    expect(await batches()).toHaveLength(1);
  });

  it('concurrent uploads with one key store one batch and all answer its response', async () => {
    const answers = await Promise.all(Array.from({ length: 3 }, () => upload(bulkForm(bulkRequest, FILE), 'together')));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(await batches()).toHaveLength(1);
    expect(messageCount()).toBe(3);
  });

  it('an upload that fails after its first chunk is answered the same error again; its batch is aborted, not stored twice', async () => {
    // Chunks of 2: the first commits, the second fails.
    const accept = h.store.accept.bind(h.store);
    let chunks = 0;
    h.store.accept = async (r: AcceptRequest) => {
      if (r.batchId !== undefined && chunks++ === 0) throw new Error('SQLITE_FULL: database or disk is full');
      return accept(r);
    };
    const first = await upload(bulkForm(bulkRequest, FILE), 'half');
    expectError(first, 500, 'INTERNAL', 'internal error', '/sms/sendbulk');
    const again = await upload(bulkForm(bulkRequest, FILE), 'half');
    expect(again.statusCode).toBe(500);
    expect(again.body).toBe(first.body);
    expect((await batches()).map((b) => b.state)).toEqual(['aborted']);
    expect(messageCount()).toBe(2);
  });

  it('an upload refused before its first commit records nothing: its repeat is stored', async () => {
    failAccepts(1, 'before');
    expectError(await upload(bulkForm(bulkRequest, FILE), 'again'), 500, 'INTERNAL', 'internal error', '/sms/sendbulk');
    expect(await batches()).toEqual([]);
    const second = await upload(bulkForm(bulkRequest, FILE), 'again');
    expect(second.statusCode, second.body).toBe(200);
    expect(await batches()).toHaveLength(1);
  });

  it('an upload whose response could not be recorded: its repeat aborts its batch and records, and answers, 500 naming it', async () => {
    const finish = h.store.finishIdempotencyKey.bind(h.store);
    let failures = 2; // the success, then the failure that follows it
    h.store.finishIdempotencyKey = async (...args) => {
      if (failures-- > 0) throw new Error('SQLITE_IOERR: disk I/O error');
      return finish(...args);
    };
    const first = await upload(bulkForm(bulkRequest, FILE), 'unrecorded');
    expectError(first, 500, 'INTERNAL', 'internal error', '/sms/sendbulk');
    const [batch] = await batches();
    expect(batch?.state).toBe('aborted');
    const again = await upload(bulkForm(bulkRequest, FILE), 'unrecorded');
    expectError(again, 500, 'INTERNAL', `its batch ${batch?.id} (bulkSessionId) is aborted`, '/sms/sendbulk');
    expect((await upload(bulkForm(bulkRequest, FILE), 'unrecorded')).body).toBe(again.body);
    expect(await batches()).toHaveLength(1);
  });

  it('a bad key is 400 VALIDATION before the upload is read', async () => {
    expectError(await upload(bulkForm(bulkRequest, FILE), ''), 400, 'VALIDATION', 'Idempotency-Key: is empty', '/sms/sendbulk');
    expect(await batches()).toEqual([]);
  });
});
