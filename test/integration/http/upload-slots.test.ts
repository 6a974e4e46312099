/**
 * sendbulk uploads in progress, over real sockets: at most http.maxConcurrentUploads at once and
 * half of them of one client, refused with 429 TOO_MANY_UPLOADS before any of the body is read;
 * and each upload's slot given back however it ends: answered, refused for its content, its
 * client gone, its body late.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SWEEP_MS } from '../../../src/ingress/http/deadlines.js';
import { until } from '../../support/engine.js';
import { ERROR_FIELDS, TOKENS, bulkForm, listeningHarness, multipart, type HarnessOptions } from '../../support/http.js';
import { RawConnection } from '../../support/raw-http.js';

/** Run after each test, last first: the harness's close, each raw connection's destroy. */
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const request = { senderId: 'MyBrand', message: 'Sale today', messageType: 'TEXT' };
const FILE = '447700900001\n447700900002\n447700900003\n';

/** A listening harness that counts the uploads whose bulkRequest was read (`started.n`). */
async function listening(o: HarnessOptions) {
  const l = await listeningHarness(o);
  cleanups.push(() => l.h.close());
  const started = { n: 0 };
  const startBulk = l.h.acceptor.startBulk.bind(l.h.acceptor);
  l.h.acceptor.startBulk = async (common) => {
    started.n++;
    return startBulk(common);
  };
  return { ...l, started };
}

/** A whole upload through fetch (`bulkRequest` as text: sent as it is): its status, Retry-After and body. */
async function upload(base: string, token: string, file = FILE, bulkRequest: object | string = request) {
  const form = typeof bulkRequest === 'string'
    ? multipart([{ name: 'bulkRequest', value: bulkRequest }, { name: 'destinationNumberFile', value: file, filename: 'numbers.csv' }])
    : bulkForm(bulkRequest, file);
  const res = await fetch(`${base}/sms/sendbulk`, { method: 'POST', headers: { ...form.headers, authorization: `Bearer ${token}` }, body: form.payload });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() as Record<string, unknown> };
}

/** An upload whose body stops before its end: its bulkRequest and part of its file sent, the rest never. */
function stalledUpload(port: number, token: string): RawConnection {
  const form = bulkForm(request, FILE);
  const c = new RawConnection(port);
  cleanups.push(() => c.destroy());
  c.write(`POST /sms/sendbulk HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${form.headers['content-type']}\r\n`
    + `Content-Length: ${form.payload.length}\r\n\r\n`);
  c.write(form.payload.subarray(0, form.payload.length - 40));
  return c;
}

function expectTooMany(res: Awaited<ReturnType<typeof upload>>, message: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.retryAfter).toBe('5');
  expect(Object.keys(res.body)).toEqual(ERROR_FIELDS);
  expect(res.body).toMatchObject({ status: 429, error: 'Too Many Requests', errorCode: 'TOO_MANY_UPLOADS', requestUri: '/sms/sendbulk', message });
}

const PER_CLIENT = 'this client has 1 sendbulk upload in progress, the most one client may have (half of http.maxConcurrentUploads, at least 1); retry after 5 s';

describe('sendbulk uploads in progress (http.maxConcurrentUploads)', () => {
  it('one client at most half of them, all clients at most all of them: 429 TOO_MANY_UPLOADS, before the body is read', async () => {
    const { h, port, base, started } = await listening({ maxConcurrentUploads: 2 });
    stalledUpload(port, TOKENS.app);
    await until(() => started.n === 1, 10_000, 'the first upload under way');

    // The same client again: its half is taken. Another client: there is a slot left.
    expectTooMany(await upload(base, TOKENS.app), PER_CLIENT);
    const other = await upload(base, TOKENS.other);
    expect(other.status, JSON.stringify(other.body)).toBe(200);
    stalledUpload(port, TOKENS.other);
    await until(() => started.n === 3, 10_000, 'the second stalled upload under way');
    expectTooMany(await upload(base, TOKENS.limited), '2 sendbulk uploads are in progress, the most at once (http.maxConcurrentUploads); retry after 5 s');

    // Refused on its headers alone: none of its body was sent, none is waited for.
    const bare = new RawConnection(port);
    cleanups.push(() => bare.destroy());
    bare.write(`POST /sms/sendbulk HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TOKENS.limited}\r\n`
      + 'Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 100000\r\n\r\n');
    const res = await bare.response();
    expect(res.status).toBe(429);
    expect(res.headers).toMatchObject({ 'retry-after': '5', connection: 'close' });
    expect(JSON.parse(res.body)).toMatchObject({ errorCode: 'TOO_MANY_UPLOADS' });
    await bare.closed;
    // No refused upload reached its bulkRequest, and nothing of theirs was stored.
    expect(started.n).toBe(3);
    expect(h.acceptedMessages).toHaveLength(3);
  }, 60_000);

  it('an upload gives its slot back when it is answered, refused for its content, left by its client, or late', async () => {
    const { h, port, base, started } = await listening({ maxConcurrentUploads: 2, listener: { bulkRequestTimeoutMs: 60_000 } });
    // One slot for this client: each upload below goes only if the one before it gave its slot back.
    expect((await upload(base, TOKENS.app)).status).toBe(200);
    expect((await upload(base, TOKENS.app)).status).toBe(200);

    // Refused before its file (bulkRequest not JSON), and after it (no valid number).
    expect((await upload(base, TOKENS.app, FILE, '{not json')).body).toMatchObject({ errorCode: 'INVALID_JSON' });
    expect((await upload(base, TOKENS.app, 'not a number\n')).body).toMatchObject({ errorCode: 'VALIDATION' });
    expect((await upload(base, TOKENS.app)).status).toBe(200);

    // Its client goes away mid-file.
    const stored = h.acceptedMessages.length;
    let before = started.n;
    const gone = stalledUpload(port, TOKENS.app);
    await until(() => started.n === before + 1, 10_000, 'the upload under way');
    expectTooMany(await upload(base, TOKENS.app), PER_CLIENT);
    gone.destroy();
    await until(async () => (await upload(base, TOKENS.app)).status === 200, 10_000, 'the slot of the upload whose client left');

    // Its body is late: answered 408 at http.bulkRequestTimeoutSeconds, and its slot is free.
    before = started.n;
    const late = stalledUpload(port, TOKENS.app);
    await until(() => started.n === before + 1, 10_000, 'the late upload under way');
    expectTooMany(await upload(base, TOKENS.app), PER_CLIENT);
    h.clock.advance(SWEEP_MS);
    h.clock.advance(60_000 + SWEEP_MS);
    await late.closed;
    expect((await late.response()).status).toBe(408);
    await until(async () => (await upload(base, TOKENS.app)).status === 200, 10_000, 'the slot of the late upload');
    // Of the two unfinished uploads, nothing was stored: only the two that went after them.
    expect(h.acceptedMessages.length - stored).toBe(2 * 3);
  }, 60_000);
});
