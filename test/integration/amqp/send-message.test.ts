/**
 * A queue message read as a send request by the HTTP API's own checks: the same request as
 * sendSms for the same body, the client and the caller's reference, and every refusal the
 * five-field body. Pure: no broker.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode, SmppdError } from '../../../src/core/errors.js';
import { MessageComposer } from '../../../src/dispatch/compose.js';
import { queueAccess } from '../../../src/ingress/amqp/queue-identity.js';
import { REFUSAL_MESSAGE_MAX, classifyFailure, readSendMessage, type ReadOptions } from '../../../src/ingress/amqp/send-message.js';
import { CLIENTS, ERROR_FIELDS, WALL_START } from '../../support/http.js';

const NAMES = CLIENTS.map((c) => c.name);
const options: ReadOptions = {
  clients: new Map(CLIENTS.map((c) => [c.name, c])), access: queueAccess({ clients: NAMES, client: 'app' }), vouched: {},
  maxBytes: 4096, requestUri: 'amqp://sms.send', now: WALL_START,
};
const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };
const read = (body: unknown, o: Partial<ReadOptions> = {}) => readSendMessage(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), { ...options, ...o });

describe('a queue message', () => {
  it('becomes the send request sendSms makes of the same body', () => {
    expect(read({ ...valid, expiryHour: 2, campaignName: 'spring', charCount: 5, reference: 'r-1' })).toEqual({
      ok: true, reference: 'r-1',
      request: { client: 'app', senderId: 'MyBrand', destination: '447700900123', message: 'Hello', messageType: 'TEXT', expiryHour: 2, campaignName: 'spring' },
    });
  });

  it('carries the regulatory ids like sendSms, a null or empty one not given', () => {
    expect(read({ ...valid, peId: '1101', templateId: null, telemarketerId: '1702' })).toMatchObject({
      ok: true, request: { regulatory: { peId: '1101', telemarketerId: '1702' } },
    });
    const none = read({ ...valid, peId: null, templateId: '' });
    expect(none.ok).toBe(true);
    expect(none.ok && 'regulatory' in none.request).toBe(false);
  });

  it('names its client, or is the default client\'s', () => {
    expect(read({ ...valid, client: 'other' })).toMatchObject({ ok: true, request: { client: 'other' } });
    expect(read(valid, { access: queueAccess({ clients: NAMES }) })).toMatchObject({ ok: false, refusal: { errorCode: 'VALIDATION', message: expect.stringContaining('client: is required') } });
  });

  it('carries a schedule like sendSms', () => {
    const r = read({ ...valid, isSchedule: true, time: '2026-01-02 10:00', gmt: '+02:00' });
    expect(r).toMatchObject({ ok: true, request: { schedule: { runAt: Date.UTC(2026, 0, 2, 8, 0), repeat: null } } });
    expect(read({ ...valid, isSchedule: true, time: '2025-01-02 10:00' })).toMatchObject({ ok: false, refusal: { message: expect.stringContaining('time: is in the past') } });
  });

  const refusals: Array<[string, string | object, number, string, string]> = [
    ['too large', { ...valid, message: 'x'.repeat(5000) }, 413, 'PAYLOAD_TOO_LARGE', 'amqp.maxMessageBytes'],
    ['not UTF-8', '\xff\xfe', 400, 'INVALID_JSON', 'not valid JSON'],
    ['a missing field', { senderId: 'MyBrand' }, 400, 'VALIDATION', 'destinationNumber: is required'],
    ['from instead of senderId', { ...valid, from: 'x' }, 400, 'VALIDATION', 'from: unknown field; this API calls it senderId'],
    ['a reference that is not a string', { ...valid, reference: 5 }, 400, 'VALIDATION', 'reference: must be a string'],
    ['a sender the client may not use', { ...valid, client: 'limited', senderId: 'Other' }, 403, 'SENDER_NOT_ALLOWED', 'senderId "Other"'],
  ];
  for (const [what, body, status, errorCode, text] of refusals) {
    it(`is refused when ${what}, in the five-field body`, () => {
      const r = typeof body === 'string' ? readSendMessage(Buffer.from(body, 'latin1'), options) : read(body);
      if (r.ok) throw new Error('expected a refusal');
      expect(Object.keys(r.refusal)).toEqual(ERROR_FIELDS);
      expect(r.refusal).toMatchObject({ status, errorCode, requestUri: 'amqp://sms.send' });
      expect(r.refusal.message).toContain(text);
    });
  }

  it('acts only as a client amqp.clients allows: another, or one unknown, is CLIENT_NOT_ALLOWED (403), and neither is named', () => {
    const only = { access: queueAccess({ clients: ['app', 'limited'], client: 'app' }) };
    expect(read({ ...valid, client: 'limited' }, only)).toMatchObject({ ok: true, request: { client: 'limited' } });
    for (const client of ['other', 'nobody']) {
      const r = read({ ...valid, client }, only);
      if (r.ok) throw new Error('expected a refusal');
      expect(r.refusal).toMatchObject({ status: 403, error: 'Forbidden', errorCode: 'CLIENT_NOT_ALLOWED', message: 'client: this queue may not send as that client (amqp.clients)' });
    }
  });

  describe('with amqp.users: acts as the client its user_id is mapped to', () => {
    const users = { access: queueAccess({ clients: ['app', 'limited'], users: { 'shop-publisher': 'limited', 'app-publisher': 'app' } }) };
    it('a mapped user_id decides, and a client field may only agree with it', () => {
      expect(read(valid, { ...users, vouched: { userId: 'shop-publisher' } })).toMatchObject({ ok: true, request: { client: 'limited' } });
      expect(read({ ...valid, client: 'limited' }, { ...users, vouched: { userId: 'shop-publisher' } })).toMatchObject({ ok: true, request: { client: 'limited' } });
      expect(read({ ...valid, client: 'app' }, { ...users, vouched: { userId: 'shop-publisher' } }))
        .toMatchObject({ ok: false, refusal: { status: 403, errorCode: 'CLIENT_NOT_ALLOWED', message: expect.stringContaining('differs from the client this message\'s user_id stands for') } });
    });
    it('no user_id, or one not mapped, is CLIENT_NOT_ALLOWED whatever the body says', () => {
      expect(read({ ...valid, client: 'app' }, users)).toMatchObject({ ok: false, refusal: { errorCode: 'CLIENT_NOT_ALLOWED', message: expect.stringContaining('user_id property') } });
      expect(read({ ...valid, client: 'app' }, { ...users, vouched: { userId: 'guest' } }))
        .toMatchObject({ ok: false, refusal: { errorCode: 'CLIENT_NOT_ALLOWED', message: expect.stringContaining('RabbitMQ user "guest" may not publish to this queue') } });
    });
    it('a message smppd set aside acts as the client it was set aside for', () => {
      expect(read(valid, { ...users, vouched: { setAsideFor: 'app' } })).toMatchObject({ ok: true, request: { client: 'app' } });
    });
  });

  it('cuts a refusal\'s message to REFUSAL_MESSAGE_MAX characters: it travels in a header', () => {
    const body: Record<string, unknown> = { ...valid };
    for (let i = 0; i < 200; i++) body[`unknown-field-${'x'.repeat(40)}-${i}`] = 1;
    const r = readSendMessage(Buffer.from(JSON.stringify(body)), { ...options, maxBytes: 1 << 20 });
    if (r.ok) throw new Error('expected a refusal');
    expect(r.refusal.message).toHaveLength(REFUSAL_MESSAGE_MAX);
    expect(r.refusal.message.endsWith('…')).toBe(true);
  });

  it('keeps the reference of a refused message when it has one', () => {
    expect(read({ ...valid, to: '1', reference: 'r-9' })).toMatchObject({ ok: false, reference: 'r-9' });
  });

  it('refuses a reference with a control character, and does not echo it', () => {
    const r = read({ ...valid, reference: 'r-9\u0000\r\nX-Injected: 1' });
    expect(r).toMatchObject({ ok: false, reference: null, refusal: { errorCode: 'VALIDATION', message: expect.stringContaining('reference: must not hold U+0000') } });
    expect(read({ ...valid, reference: 'x'.repeat(256) })).toMatchObject({ ok: false, reference: null, refusal: { message: expect.stringContaining('reference: must be at most 255 characters') } });
  });

  it('any JSON body is a send request or a five-field refusal, never an exception', () => {
    const hostile = fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('AB\u0000C', '\ud800', 'x'.repeat(300), 'Müller', '+447700900123'));
    const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostile);
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({ field: fc.constantFrom(...Object.keys(valid), 'reference', 'client', 'campaignName', 'repeat', 'expiryHour', 'isSchedule'), value })
        .map(({ field, value: v }) => ({ ...valid, [field]: v })),
    );
    fc.assert(fc.property(body, (b) => {
      const r = read(b);
      if (r.ok) return;
      expect(Object.keys(r.refusal)).toEqual(ERROR_FIELDS);
      expect(r.refusal.status).toBeGreaterThanOrEqual(400);
      expect(r.refusal.status).toBeLessThan(500);
    }), { seed: 0x9_ee1e, numRuns: 500 });
  });
});

describe('a failed send', () => {
  it('is refused when the HTTP API answers 4xx for it', () => {
    expect(classifyFailure(new SmppdError(ErrorCode.TEXT_NOT_GSM7, 'not GSM-7: Ж'), 'amqp://q')).toEqual({
      kind: 'refuse', refusal: { status: 400, error: 'Bad Request', message: 'not GSM-7: Ж', errorCode: 'TEXT_NOT_GSM7', requestUri: 'amqp://q' },
    });
  });

  it('is refused VALIDATION, as over HTTP, when its upstream requires a regulatory id it lacks', () => {
    const composer = new MessageComposer({
      defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
      regulatoryTlvs: { peId: 0x1400, templateId: 0x1401 }, requireRegulatory: true,
    });
    let thrown: unknown;
    try {
      composer.compose({ source: 'MyBrand', destination: '', text: 'Hello', regulatory: { peId: '1101' } });
    } catch (e) {
      thrown = e;
    }
    expect(classifyFailure(thrown, 'amqp://q')).toEqual({
      kind: 'refuse',
      refusal: { status: 400, error: 'Bad Request', message: 'templateId: is required by the upstream this destination is sent through', errorCode: 'VALIDATION', requestUri: 'amqp://q' },
    });
  });

  it('is tried again after QUEUE_FULL\'s retry-after, or after a store error', () => {
    expect(classifyFailure(new SmppdError(ErrorCode.QUEUE_FULL, 'full', { retryAfterSeconds: 3 }), 'amqp://q')).toEqual({ kind: 'retry', code: 'QUEUE_FULL', retryAfterMs: 3000 });
    expect(classifyFailure(new Error('SQLITE_BUSY'), 'amqp://q')).toEqual({ kind: 'retry', code: 'INTERNAL', retryAfterMs: 0 });
  });

  it('says when QUEUE_FULL is the client\'s own clients[].maxQueued, which holds up no other client', () => {
    const full = (limit: string) => new SmppdError(ErrorCode.QUEUE_FULL, 'full', { retryAfterSeconds: 2, limit });
    expect(classifyFailure(full('clients[].maxQueued'), 'amqp://q')).toEqual({ kind: 'retry', code: 'QUEUE_FULL', retryAfterMs: 2000, ownCap: true });
    expect(classifyFailure(full('limits.maxQueued'), 'amqp://q')).toEqual({ kind: 'retry', code: 'QUEUE_FULL', retryAfterMs: 2000 });
  });
});
