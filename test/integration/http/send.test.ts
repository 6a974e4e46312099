/**
 * POST /sms/sendSms, /sms/identify and /sms/lookup against messaging-service-api.md §4.1, §5,
 * §7: every validation rule, auth, body limits and content types, each refusal in the
 * documented body.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, TOKENS, WALL_START, bearer, httpHarness, multipart, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness();
});
afterEach(async () => {
  await h.close(); // also fails if a token reached the log
});

const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };

function send(body: unknown, headers: Record<string, string> = bearer()): Promise<LightMyRequestResponse> {
  return h.app.inject({ method: 'POST', url: '/sms/sendSms', headers, payload: body as object });
}

/** The five-field body with this status and code, its message containing `text`. */
function expectError(res: LightMyRequestResponse, status: number, errorCode: string, text = '', requestUri = '/sms/sendSms'): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(Object.keys(body)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status, errorCode, requestUri });
  expect(typeof body.error).toBe('string');
  expect(body.message).toContain(text);
  for (const token of Object.values(TOKENS)) expect(res.body).not.toContain(token);
}

describe('POST /sms/sendSms accepts', () => {
  it('answers 200 with the message id as plain text, after the message is stored', async () => {
    const res = await send(valid);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const stored = await h.store.getMessage(res.body);
    expect(stored).toMatchObject({ messageId: res.body, client: 'app', source: 'MyBrand', destination: '447700900123', status: 'SUBMITTED', batchId: null });
    expect(stored?.parts).toHaveLength(1);
  });

  it('takes UNICODE text with characters outside GSM-7', async () => {
    const res = await send({ ...valid, message: '“Hi” — 👋', messageType: 'UNICODE' });
    expect(res.statusCode).toBe(200);
  });

  it('takes every documented optional field, and null for an absent one', async () => {
    const res = await send({
      ...valid, charCount: 5, smsParts: 1, charLimit: 160, expiryHour: 24, campaignName: 'spring', isSchedule: false, time: null, gmt: null,
      repeat: null, delay: 0, peId: 'pe', templateId: 'tpl', telemarketerId: 'tm',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await send({ ...valid, campaignName: null, expiryHour: null, isSchedule: null })).statusCode).toBe(200);
  });

  it('a client limited to some senders may use them', async () => {
    expect((await send(valid, bearer(TOKENS.limited))).statusCode).toBe(200);
  });
});

describe('POST /sms/sendSms refuses with 400 and names the field', () => {
  for (const field of ['senderId', 'destinationNumber', 'message', 'messageType']) {
    it(`a missing ${field}`, async () => {
      const { [field as keyof typeof valid]: _gone, ...rest } = valid;
      expectError(await send(rest), 400, 'VALIDATION', `${field}: is required`);
    });
  }

  for (const [field, instead] of [['to', 'destinationNumber'], ['from', 'senderId'], ['text', 'message']] as const) {
    it(`the unknown field ${field}`, async () => {
      expectError(await send({ ...valid, [field]: 'x' }), 400, 'VALIDATION', `${field}: unknown field; this API calls it ${instead}`);
    });
  }

  it('any other unknown field', async () => {
    expectError(await send({ ...valid, priority: 1 }), 400, 'VALIDATION', 'priority: unknown field');
  });

  const numbers: Array<[string, string, string]> = [
    ['a + prefix', '+447700900123', "must not start with '+'"],
    ['a 00 prefix', '00447700900123', "must not start with '00'"],
    ['spaces', '44 7700 900123', 'must not contain spaces'],
    ['a leading 0', '07700900123', 'must not start with 0'],
    ['dashes', '44-7700-900123', 'must be digits only'],
    ['letters', '4477OO900123', 'must be digits only'],
    ['too few digits', '447700', 'must be at least 7 digits'],
    ['too many digits', '4477009001234567', 'must be at most 15 digits'],
    ['an empty string', '', 'is empty'],
  ];
  for (const [name, number, reason] of numbers) {
    it(`a destinationNumber with ${name}`, async () => {
      expectError(await send({ ...valid, destinationNumber: number }), 400, 'VALIDATION', `destinationNumber: ${reason}`);
    });
  }

  it('a destinationNumber given as a JSON number', async () => {
    expectError(await send({ ...valid, destinationNumber: 447700900123 }), 400, 'VALIDATION', 'destinationNumber: must be a string');
  });

  for (const type of ['GSM', 'text', 'AUTO', 7]) {
    it(`messageType ${JSON.stringify(type)}`, async () => {
      expectError(await send({ ...valid, messageType: type }), 400, 'VALIDATION', 'messageType: must be TEXT (GSM-7) or UNICODE');
    });
  }

  it('TEXT with curly quotes, naming the characters', async () => {
    const res = await send({ ...valid, message: 'It’s “quoted”' });
    expectError(res, 400, 'TEXT_NOT_GSM7', 'send it as UNICODE');
    for (const c of ['’', '“', '”']) expect(res.json().message).toContain(c);
  });

  it('an empty message and a senderId longer than SMPP allows', async () => {
    expectError(await send({ ...valid, message: '' }), 400, 'VALIDATION', 'message: must not be empty');
    expectError(await send({ ...valid, senderId: 'x'.repeat(21) }), 400, 'VALIDATION', 'senderId: is 21 characters; an alphanumeric sender ID is at most 11');
  });

  for (const hours of [0, 2.5, 100_000, '24']) {
    it(`expiryHour ${JSON.stringify(hours)}`, async () => {
      expectError(await send({ ...valid, expiryHour: hours }), 400, 'VALIDATION', 'expiryHour: must be');
    });
  }

  it('a message needing more parts than the upstream allows', async () => {
    expectError(await send({ ...valid, message: 'x'.repeat(153 * 10 + 1) }), 400, 'MESSAGE_TOO_LONG');
  });

  it('lists every problem of one body at once', async () => {
    const res = await send({ to: '447700900123', senderId: 'MyBrand', message: 'hi', messageType: 'TEXT' });
    expectError(res, 400, 'VALIDATION', 'destinationNumber: is required; to: unknown field');
  });
});

describe('the body as a whole', () => {
  it('bad JSON is 400 INVALID_JSON', async () => {
    expectError(await send('{"senderId": "MyBrand",', { ...bearer(), 'content-type': 'application/json' }), 400, 'INVALID_JSON', 'not valid JSON');
  });

  it('JSON that is not an object is 400', async () => {
    expectError(await send('[1, 2]', { ...bearer(), 'content-type': 'application/json' }), 400, 'VALIDATION', 'the body must be a JSON object');
    expectError(await send('"text"', { ...bearer(), 'content-type': 'application/json' }), 400, 'VALIDATION', 'the body must be a JSON object');
  });

  it('no body is 400', async () => {
    expectError(await h.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer() }), 400, 'VALIDATION', 'the body must be a JSON object');
  });

  it('a body over http.maxBodyBytes is 413', async () => {
    expectError(await send({ ...valid, message: 'x'.repeat(1024 * 1024) }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a Content-Type other than JSON is 415', async () => {
    expectError(await send('senderId=MyBrand', { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(await send(JSON.stringify(valid), { ...bearer(), 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a multipart body is 415 here (only sendbulk takes multipart), and nothing is stored', async () => {
    const form = multipart([{ name: 'senderId', value: 'MyBrand' }]);
    for (const url of ['/sms/sendSms', '/sms/identify']) {
      const res = await h.app.inject({ method: 'POST', url, headers: { ...bearer(), ...form.headers }, payload: form.payload });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'send application/json', url);
    }
    expect(h.acceptedMessages).toEqual([]);
  });

  it('a JSON Content-Type with a charset is JSON', async () => {
    expect((await send(JSON.stringify(valid), { ...bearer(), 'content-type': 'application/json; charset=utf-8' })).statusCode).toBe(200);
  });
});

describe('auth (§5)', () => {
  const expect401 = (res: LightMyRequestResponse, text: string): void => {
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Unauthorized', message: expect.stringContaining(text) });
    expect(res.headers['www-authenticate']).toBe('Bearer');
  };

  it('a missing token is 401 with the two-field body', async () => {
    expect401(await send(valid, {}), 'missing bearer token');
  });

  it('an unknown token is 401 and is not echoed', async () => {
    const res = await send(valid, bearer('not-a-known-token-at-all'));
    expect401(res, 'invalid bearer token');
    expect(res.body).not.toContain('not-a-known-token-at-all');
  });

  it('a token differing only in its last character, or a prefix of a token, is 401', async () => {
    expect401(await send(valid, bearer(`${TOKENS.app.slice(0, -1)}X`)), 'invalid bearer token');
    expect401(await send(valid, bearer(TOKENS.app.slice(0, 10))), 'invalid bearer token');
  });

  it('another scheme is 401', async () => {
    expect401(await send(valid, { authorization: `Basic ${TOKENS.app}` }), 'must be Bearer <token>');
  });

  it('the scheme is case-insensitive', async () => {
    expect((await send(valid, { authorization: `bearer ${TOKENS.app}` })).statusCode).toBe(200);
  });

  it('is checked before the body is read', async () => {
    expect401(await send('{bad json', { 'content-type': 'application/json' }), 'missing bearer token');
  });

  it('a refused request goes no further: nothing is stored', async () => {
    expect401(await send(valid, bearer('not-a-known-token-at-all')), 'invalid bearer token');
    expect401(await send(valid, {}), 'missing bearer token');
    expect(h.acceptSizes).toEqual([]);
  });

  it('each request is served as the client whose token it carries', async () => {
    const sent = await send(valid, bearer(TOKENS.other));
    expect((await h.store.getMessage(sent.body))?.client).toBe('other');
    const own = await h.app.inject({ method: 'GET', url: `/sms/status/${sent.body}`, headers: bearer(TOKENS.other) });
    expect(own.statusCode).toBe(200);
    expectError(await h.app.inject({ method: 'GET', url: `/sms/status/${sent.body}`, headers: bearer() }), 404, 'MESSAGE_NOT_FOUND', '', `/sms/status/${sent.body}`);
  });

  it('a sender outside the client’s senders is 403', async () => {
    expectError(await send({ ...valid, senderId: 'Other' }, bearer(TOKENS.limited)), 403, 'SENDER_NOT_ALLOWED', '"Other" is not allowed');
  });

  it('every /sms route needs the token', async () => {
    for (const [method, url] of [['POST', '/sms/identify'], ['POST', '/sms/sendbulk'], ['GET', '/sms/list'], ['GET', '/sms/edit?batch_Id=1'],
      ['GET', '/sms/pause?batch_Id=1'], ['GET', '/sms/resume?batch_Id=1'], ['DELETE', '/sms/abort?batch_Id=1'], ['GET', '/sms/listSchedule'],
      ['POST', '/sms/send-now?scheduleId=1'], ['DELETE', '/sms/abort/schedule?scheduleId=1'], ['GET', '/sms/status/x'], ['POST', '/sms/lookup']] as const) {
      expect((await h.app.inject({ method, url })).statusCode, `${method} ${url}`).toBe(401);
    }
  });
});

describe('scheduling a sendSms', () => {
  const at = (time: string, gmt?: string) => send({ ...valid, isSchedule: true, time, ...(gmt ? { gmt } : {}) });

  it('stores a schedule at time in gmt, listed by /sms/listSchedule and /sms/list', async () => {
    const res = await at('2026-01-02 10:30', '+04:00');
    expect(res.statusCode, res.body).toBe(200);
    const schedules = (await h.app.inject({ method: 'GET', url: '/sms/listSchedule', headers: bearer() })).json();
    expect(schedules).toEqual([expect.objectContaining({ state: 'scheduled', time: '2026-01-02T06:30:00.000Z', senderId: 'MyBrand', total: 1 })]);
    const list = (await h.app.inject({ method: 'GET', url: '/sms/list', headers: bearer() })).json();
    expect(list).toEqual([expect.objectContaining({ reqType: 'single', total: 1, active: true })]);
    expect((await h.store.getMessage(res.body))?.batchId).toBe(schedules[0].batchId);
  });

  it('reads time with a T, with seconds, and in +00:00 by default', async () => {
    expect((await at('2026-01-01T12:00:00')).statusCode).toBe(200);
    const [s] = (await h.app.inject({ method: 'GET', url: '/sms/listSchedule', headers: bearer() })).json();
    expect(s.time).toBe('2026-01-01T12:00:00.000Z');
  });

  it('refuses isSchedule without time, a time without isSchedule, a bad time, a bad gmt and a past time', async () => {
    expectError(await send({ ...valid, isSchedule: true }), 400, 'VALIDATION', 'time: is required when isSchedule is true');
    expectError(await send({ ...valid, time: '2026-01-02 10:00' }), 400, 'VALIDATION', 'time: is set but isSchedule is not true');
    expectError(await at('02/01/2026 10:00'), 400, 'VALIDATION', "time: must be a local date-time 'YYYY-MM-DD HH:mm:ss'");
    expectError(await at('2026-02-30 10:00'), 400, 'VALIDATION', 'time: must be a local date-time');
    expectError(await at('2026-01-02T10:00:00Z'), 400, 'VALIDATION', 'time: must be a local date-time');
    expectError(await at('2026-01-02 10:00', 'Mars/Olympus'), 400, 'VALIDATION', 'gmt: must be an offset like +04:00');
    expectError(await at('2025-12-31 23:00'), 400, 'VALIDATION', 'time: is in the past');
    expectError(await send({ ...valid, isSchedule: 'yes', time: '2026-01-02 10:00' }), 400, 'VALIDATION', 'isSchedule: must be true or false');
  });

  it('a time within the last minute still counts as now', async () => {
    expect((await at(new Date(WALL_START - 30_000).toISOString().slice(0, 19))).statusCode).toBe(200);
  });
});

describe('the request log', () => {
  it('has one debug line per request, answered or refused: method, path without the query, and status', async () => {
    await send(valid);
    await send(valid, {});
    await h.app.inject({ method: 'GET', url: '/sms/edit?batch_Id=12345', headers: bearer() });
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'http_request');
    expect(lines.map(({ level, method, path, status }) => ({ level, method, path, status }))).toEqual([
      { level: 'debug', method: 'POST', path: '/sms/sendSms', status: 200 },
      { level: 'debug', method: 'POST', path: '/sms/sendSms', status: 401 },
      { level: 'debug', method: 'GET', path: '/sms/edit', status: 404 },
    ]);
    for (const line of lines) expect(typeof line.ms).toBe('number');
  });
});

describe('backpressure', () => {
  it('above limits.maxQueued a send is 429 with Retry-After', async () => {
    const full = await httpHarness({ maxQueued: 0 });
    try {
      const res = await full.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(), payload: valid });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.statusCode).toBe(429);
      expect(res.json()).toMatchObject({ status: 429, error: 'Too Many Requests', errorCode: 'QUEUE_FULL', requestUri: '/sms/sendSms' });
    } finally {
      await full.close();
    }
  });

  it('a client at its clients[].maxQueued is 429 naming that cap; other clients are not refused', async () => {
    const capped = await httpHarness({ clientMaxQueued: { app: 3 } });
    try {
      const sendAs = (token: string, message = 'Hello') => capped.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(token), payload: { ...valid, message } });
      expect((await sendAs(TOKENS.app)).statusCode).toBe(200);
      // Parts count: a text of two parts needs two more.
      expect((await sendAs(TOKENS.app, 'x'.repeat(200))).statusCode).toBe(200);
      const refused = await sendAs(TOKENS.app);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.json()).toMatchObject({ errorCode: 'QUEUE_FULL', message: 'client app has 3 parts queued; clients[].maxQueued is 3 and this request needs 1 more: retry later' });
      expect((await sendAs(TOKENS.other)).statusCode).toBe(200);
      expect(capped.acceptSizes).toEqual([1, 1, 1]);
    } finally {
      await capped.close();
    }
  });
});

describe('POST /sms/identify (§2.5)', () => {
  const identify = (body: unknown) => h.app.inject({ method: 'POST', url: '/sms/identify', headers: bearer(), payload: body as object });

  it('answers the encoding analysis', async () => {
    expect((await identify({ message: 'Hello' })).json()).toEqual({ message: 'Hello', messageType: 'GSM-7', smscount: 1, charCount: 5, charLimit: 160 });
    expect((await identify({ message: 'x'.repeat(161) })).json()).toMatchObject({ messageType: 'GSM-7', smscount: 2, charLimit: 153 });
    expect((await identify({ message: '“Hi”' })).json()).toMatchObject({ messageType: 'UNICODE', smscount: 1, charCount: 4, charLimit: 70 });
  });

  it('refuses a missing message and unknown fields', async () => {
    expectError(await identify({}), 400, 'VALIDATION', 'message: is required', '/sms/identify');
    expectError(await identify({ message: 'x', text: 'y' }), 400, 'VALIDATION', 'text: unknown field', '/sms/identify');
  });
});

describe('other routes', () => {
  it('POST /sms/lookup is 501 in the five-field body', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/sms/lookup?destinationNumber=447700900123', headers: bearer() });
    expectError(res, 501, 'NOT_IMPLEMENTED', 'cannot be made over SMPP', '/sms/lookup');
    expect(res.json().error).toBe('Not Implemented');
  });

  it('a malformed URL is 400 in the five-field body', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/sms/status/%E0%A4%A', headers: bearer() });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json())).toEqual(ERROR_FIELDS);
    expect(res.json().errorCode).toBe('BAD_REQUEST');
  });

  it('an unknown path is 404, a known one with another method 405 with Allow, in the five-field body', async () => {
    expectError(await h.app.inject({ method: 'GET', url: '/sms/nothing?x=1', headers: bearer() }), 404, 'NOT_FOUND', 'no route GET /sms/nothing', '/sms/nothing');
    const wrong = await h.app.inject({ method: 'GET', url: '/sms/sendSms', headers: bearer() });
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED', '/sms/sendSms takes POST, not GET', '/sms/sendSms');
    expect(wrong.headers.allow).toBe('POST');
    const head = await h.app.inject({ method: 'HEAD', url: '/sms/status/some-id' });
    expect([head.statusCode, head.headers.allow]).toEqual([405, 'GET']);
  });
});
