/**
 * The API over a real socket (127.0.0.1, an ephemeral port) with Node's fetch: a send, auth,
 * and sendbulk uploads streamed in pieces — a 200,000-number file read as it arrives, counted
 * whole and only then committed in chunks, and an over-limit upload without a Content-Length,
 * refused with 413 before anything is stored.
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

  it('streams a 200,000-number file: read as it arrives, counted whole, and only then committed in chunks', async () => {
    const { h, base } = await listening();
    let bodySent = false;
    let committedBeforeEnd: boolean | undefined;
    h.onAccept.push(() => { committedBeforeEnd ??= !bodySent; });
    async function* body(): AsyncGenerator<Uint8Array> {
      yield encoder.encode(bulkHead(request));
      for (let i = 0; i < 200_000; i += 10_000) yield encoder.encode(numbers(i, i + 10_000));
      bodySent = true;
      yield encoder.encode(bulkTail);
    }
    const res = await upload(base, body());
    const answer = (await res.json()) as { bulkSessionId: string; bulkListInfo: unknown };
    expect(res.status, JSON.stringify(answer)).toBe(200);
    // Nothing is stored before the whole upload is counted against the caps on queued parts.
    expect(committedBeforeEnd).toBe(false);
    expect(answer.bulkListInfo).toEqual({ total: 200_000, validCount: 200_000, invalidCount: 0, duplicate: 0, errors: {} });
    // In chunks of 1,000, the daemon's default.
    expect(h.acceptSizes.every((n) => n <= 1000)).toBe(true);
    expect(h.acceptSizes.reduce((a, b) => a + b, 0)).toBe(200_000);
    expect(h.acceptSizes).toHaveLength(200);
    const [batch] = await h.store.listBatches('app');
    expect(batch).toMatchObject({ id: Number(answer.bulkSessionId), total: 200_000, state: 'active' });
  }, 90_000); // 200,000 rows into SQLite: seconds, more on a busy machine

  it('an upload over http.maxUploadBytes without a Content-Length is 413, and nothing of it is stored', async () => {
    const { h, base } = await listening({ maxUploadBytes: 4096, maxBodyBytes: 1024, bulkChunkSize: 10 });
    async function* body(): AsyncGenerator<Uint8Array> {
      yield encoder.encode(bulkHead(request));
      for (let i = 0; i < 1000; i += 100) yield encoder.encode(numbers(i, i + 100));
      yield encoder.encode(bulkTail);
    }
    const res = await upload(base, body());
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ errorCode: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('larger than 4096 bytes') });
    expect(h.acceptSizes).toEqual([]);
    expect(await h.store.listBatches('app')).toEqual([]);
    for (const token of Object.values(TOKENS)) expect(h.logs.join('\n')).not.toContain(token);
  });
});
