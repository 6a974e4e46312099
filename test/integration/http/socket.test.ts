/**
 * The API over a real socket (127.0.0.1, an ephemeral port) with Node's fetch: a send, auth,
 * and sendbulk uploads streamed in pieces — a 200,000-number file whose first numbers are
 * committed while the rest is still on its way, and an over-limit upload without a
 * Content-Length, refused with 413 after its first chunks, whose batch is then aborted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BOUNDARY, TOKENS, bearer, listeningHarness, type Harness, type HarnessOptions } from '../../support/http.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function listening(o: HarnessOptions = {}): Promise<{ h: Harness; base: string }> {
  const listening = await listeningHarness(o);
  h = listening.h;
  return listening;
}

const encoder = new TextEncoder();
const numbers = (from: number, to: number): string => {
  let s = '';
  for (let i = from; i < to; i++) s += `${447_700_000_000 + i}\n`;
  return s;
};
const bulkHead = (request: object) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="bulkRequest"\r\n\r\n${JSON.stringify(request)}\r\n`
  + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="destinationNumberFile"; filename="numbers.txt"\r\nContent-Type: text/plain\r\n\r\n`;
const bulkTail = `\r\n--${BOUNDARY}--\r\n`;
const request = { senderId: 'MyBrand', message: 'Sale', messageType: 'TEXT' };

function within<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(why)), ms))]);
}

/** A streamed multipart upload (chunked: no Content-Length). */
function upload(base: string, body: AsyncIterable<Uint8Array>): Promise<Response> {
  return fetch(`${base}/sms/sendbulk`, {
    method: 'POST',
    headers: { ...bearer(), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('over a real socket', () => {
  it('sendSms answers the id as text/plain; a wrong token is 401', async () => {
    const { base } = await listening();
    const payload = JSON.stringify({ senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' });
    const ok = await fetch(`${base}/sms/sendSms`, { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: payload });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain/);
    const id = await ok.text();
    const status = await fetch(`${base}/sms/status/${id}`, { headers: bearer() });
    expect(await status.json()).toMatchObject({ messageId: id, status: 'SUBMITTED' });

    const refused = await fetch(`${base}/sms/sendSms`, { method: 'POST', headers: { ...bearer('wrong-token-wrong-token'), 'content-type': 'application/json' }, body: payload });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'Unauthorized', message: 'invalid bearer token' });
  });

  it('streams a 200,000-number file: chunks are committed while the upload is still open', async () => {
    const { h, base } = await listening();
    const firstCommit = new Promise<void>((resolve) => h.onAccept.push(resolve));
    let committedBeforeEnd = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      yield encoder.encode(bulkHead(request));
      for (let i = 0; i < 100_000; i += 10_000) yield encoder.encode(numbers(i, i + 10_000));
      // Half the file is sent: a server that buffers the whole file has stored nothing yet.
      await within(firstCommit, 15_000, 'nothing was committed before the upload ended: the file is being buffered');
      committedBeforeEnd = true;
      for (let i = 100_000; i < 200_000; i += 10_000) yield encoder.encode(numbers(i, i + 10_000));
      yield encoder.encode(bulkTail);
    }
    const res = await upload(base, body());
    const answer = (await res.json()) as { bulkSessionId: string; bulkListInfo: unknown };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    expect(committedBeforeEnd).toBe(true);
    expect(answer.bulkListInfo).toEqual({ total: 200_000, validCount: 200_000, invalidCount: 0, duplicate: 0, errors: {} });
    // In chunks of 1,000, the daemon's default.
    expect(h.acceptSizes.every((n) => n <= 1000)).toBe(true);
    expect(h.acceptSizes.reduce((a, b) => a + b, 0)).toBe(200_000);
    expect(h.acceptSizes).toHaveLength(200);
    const [batch] = await h.store.listBatches('app');
    expect(batch).toMatchObject({ id: Number(answer.bulkSessionId), total: 200_000, state: 'active' });
  }, 90_000); // 200,000 rows into SQLite: seconds, more on a busy machine

  it('an upload over http.maxUploadBytes without a Content-Length is 413, and the batch it began is aborted', async () => {
    const { h, base } = await listening({ maxUploadBytes: 4096, maxBodyBytes: 1024, bulkChunkSize: 10 });
    async function* body(): AsyncGenerator<Uint8Array> {
      yield encoder.encode(bulkHead(request));
      for (let i = 0; i < 1000; i += 100) yield encoder.encode(numbers(i, i + 100));
      yield encoder.encode(bulkTail);
    }
    const res = await upload(base, body());
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ errorCode: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('larger than 4096 bytes') });
    expect(h.acceptSizes.length).toBeGreaterThan(0); // chunks went in before the limit showed
    const batches = await h.store.listBatches('app');
    expect(batches).toHaveLength(1);
    expect(batches[0]?.state).toBe('aborted');
    expect(h.logs.some((l) => l.includes('bulk_abandoned'))).toBe(true);
    for (const token of Object.values(TOKENS)) expect(h.logs.join('\n')).not.toContain(token);
  });
});
