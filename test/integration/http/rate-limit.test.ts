/**
 * clients[].rateLimit over HTTP: a sendSms or a sendbulk past the client's token bucket is 429
 * RATE_LIMITED in the five-field body with Retry-After in whole seconds, refused before its body
 * is read; other clients, and other routes, are not slowed. Time is the harness's ManualClock.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, TOKENS, bearer, bulkForm, httpHarness, type Harness } from '../../support/http.js';

const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** `app` limited to `perSecond` with `burst`; `other` unlimited; `limited` at 1/s, burst 1. */
async function harness(perSecond: number, burst: number): Promise<Harness> {
  h = await httpHarness({
    clients: [
      { name: 'app', token: TOKENS.app, rateLimit: { perSecond, burst } },
      { name: 'limited', token: TOKENS.limited, rateLimit: { perSecond: 1, burst: 1 } },
      { name: 'other', token: TOKENS.other },
    ],
  });
  return h;
}

function send(harness: Harness, token: string = TOKENS.app, body: unknown = valid): Promise<LightMyRequestResponse> {
  return harness.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(token), payload: body as object });
}

function expectRateLimited(res: LightMyRequestResponse, retryAfter: string, requestUri = '/sms/sendSms'): void {
  expect(res.statusCode, res.body).toBe(429);
  expect(res.headers['retry-after']).toBe(retryAfter);
  const body = res.json();
  expect(Object.keys(body)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status: 429, error: 'Too Many Requests', errorCode: 'RATE_LIMITED', requestUri });
  expect(body.message).toContain('rate limit');
}

describe('clients[].rateLimit over HTTP', () => {
  it('a client past its burst gets 429 RATE_LIMITED with Retry-After, and is served again once a token is due', async () => {
    const t = await harness(2, 3);
    for (let i = 0; i < 3; i++) expect((await send(t)).statusCode).toBe(200);
    const refused = await send(t);
    expectRateLimited(refused, '1'); // 500 ms, rounded up to whole seconds
    expect(t.rateLimited).toEqual(['app']);
    t.clock.advance(499);
    expectRateLimited(await send(t), '1');
    t.clock.advance(1);
    expect((await send(t)).statusCode).toBe(200);
    expect(t.acceptedMessages).toHaveLength(4);
  });

  it('Retry-After is the wait in whole seconds, rounded up', async () => {
    const t = await harness(0.25, 1);
    expect((await send(t)).statusCode).toBe(200);
    expectRateLimited(await send(t), '4');
    t.clock.advance(2500);
    expectRateLimited(await send(t), '2');
  });

  it('does not slow other clients: an unlimited one, nor one with a bucket of its own', async () => {
    const t = await harness(1, 1);
    expect((await send(t)).statusCode).toBe(200);
    expectRateLimited(await send(t), '1');
    for (let i = 0; i < 20; i++) expect((await send(t, TOKENS.other)).statusCode).toBe(200);
    expect((await send(t, TOKENS.limited)).statusCode).toBe(200);
    expect(t.rateLimited).toEqual(['app']);
  });

  it('refuses before the body is read: an invalid body past the limit is 429, not 400, and nothing is stored', async () => {
    const t = await harness(1, 1);
    expect((await send(t)).statusCode).toBe(200);
    expectRateLimited(await send(t, TOKENS.app, { to: 'nobody' }), '1');
    expect(t.acceptedMessages).toHaveLength(1);
  });

  it('a sendbulk costs one token whatever its size, and past the limit is refused before its upload is read', async () => {
    const t = await harness(1, 2);
    const numbers = Array.from({ length: 500 }, (_, i) => `4477009${String(i).padStart(5, '0')}`).join('\n');
    const upload = (): Promise<LightMyRequestResponse> => {
      const form = bulkForm({ senderId: 'MyBrand', message: 'Sale today', messageType: 'TEXT' }, numbers);
      return t.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: { ...bearer(), ...form.headers }, payload: form.payload });
    };
    expect((await upload()).statusCode).toBe(200);
    expect((await send(t)).statusCode).toBe(200); // the 500 numbers took one token, not 500
    const refused = await upload();
    expectRateLimited(refused, '1', '/sms/sendbulk');
    expect(t.acceptedMessages).toHaveLength(501);
  });

  it('closes the connection of a refused request whose body is larger than http.maxBodyBytes, and keeps a small one', async () => {
    const t = await harness(1, 1);
    expect((await send(t)).statusCode).toBe(200);
    const small = await send(t);
    expectRateLimited(small, '1');
    expect(small.headers.connection).not.toBe('close');
    const big = await t.app.inject({
      method: 'POST', url: '/sms/sendSms', headers: { ...bearer(), 'content-type': 'application/json' }, payload: 'x'.repeat(2 * 1024 * 1024),
    });
    expectRateLimited(big, '1');
    expect(big.headers.connection).toBe('close');
  });

  it('counts only sends: identify and status reads are not limited, and a 401 takes no token', async () => {
    const t = await harness(1, 1);
    for (let i = 0; i < 5; i++) {
      expect((await t.app.inject({ method: 'POST', url: '/sms/identify', headers: bearer(), payload: { message: 'hi' } })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/sms/status/nope', headers: bearer() })).statusCode).toBe(404);
      expect((await t.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer('wrong-token-0123456789abcdef'), payload: valid })).statusCode).toBe(401);
    }
    expect((await send(t)).statusCode).toBe(200);
  });
});
