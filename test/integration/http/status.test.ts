/**
 * GET /sms/status/{messageId}: the polling shape, as the message moves on, for its owner only.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLog } from '../../../src/core/log.js';
import { RetentionSweep } from '../../../src/dispatch/retention.js';
import { ERROR_FIELDS, TOKENS, bearer, httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness();
});
afterEach(async () => {
  await h.close();
});

const send = async (message: string, messageType = 'TEXT'): Promise<string> => {
  const res = await h.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(), payload: { senderId: 'MyBrand', destinationNumber: '447700900123', message, messageType } });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};
const status = (id: string, token: string = TOKENS.app) => h.app.inject({ method: 'GET', url: `/sms/status/${encodeURIComponent(id)}`, headers: bearer(token) });

describe('GET /sms/status/{messageId}', () => {
  it('answers the message and its parts, times in ISO 8601 UTC', async () => {
    const id = await send('Hello');
    const res = await status(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      messageId: id, status: 'SUBMITTED', reason: null, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z',
      batchId: null, destination: '447700900123', parts: [{ part: 1, status: 'SUBMITTED', smscMessageId: null }],
    });
  });

  it('follows the parts of a long message as they are submitted', async () => {
    const id = await send('x'.repeat(200));
    expect((await status(id)).json().parts).toHaveLength(2);
    const now = h.clock.wallNow() + 1500;
    await h.store.recordSubmit(id, [{ part: 1, kind: 'accepted', smscId: 'abc1', matchKey: 'abc1', bind: 'sim#0', attempts: 1 }], now);
    let body = (await status(id)).json();
    expect(body.status).toBe('SUBMITTED'); // the least advanced part
    expect(body.parts).toEqual([{ part: 1, status: 'SENT', smscMessageId: 'abc1' }, { part: 2, status: 'SUBMITTED', smscMessageId: null }]);
    expect(body.updatedAt).toBe('2026-01-01T00:00:01.500Z');
    await h.store.recordSubmit(id, [{ part: 2, kind: 'final', status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', attempts: 1 }], now);
    body = (await status(id)).json();
    expect(body).toMatchObject({ status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)' });
    expect(body.parts[1]).toEqual({ part: 2, status: 'REJECTED', smscMessageId: null });
  });

  it('a message the retention sweep deleted is 404, as an unknown id; a newer one is still served', async () => {
    const old = await send('Hello');
    await h.store.recordSubmit(old, [{ part: 1, kind: 'accepted', smscId: 'abc1', matchKey: 'abc1', bind: 'sim#0', attempts: 1 }], h.clock.wallNow());
    // SENT without a validity: its receipt may come for a week, then retention's 30 days count.
    h.clock.advance((7 + 31) * 86_400_000);
    const recent = await send('Hello again');
    const swept = await new RetentionSweep({ store: h.store, clock: h.clock, log: silentLog, retentionDays: 30 }).sweep();
    expect(swept).toMatchObject({ messages: 1 });
    const res = await status(old);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ errorCode: 'MESSAGE_NOT_FOUND' });
    expect((await status(recent)).statusCode).toBe(200);
  });

  it('another client’s message, and an unknown id, are 404', async () => {
    const id = await send('Hello');
    for (const res of [await status(id, TOKENS.other), await status('no-such-id')]) {
      expect(res.statusCode).toBe(404);
      expect(Object.keys(res.json())).toEqual(ERROR_FIELDS);
      expect(res.json()).toMatchObject({ errorCode: 'MESSAGE_NOT_FOUND', requestUri: expect.stringMatching(/^\/sms\/status\//) });
    }
  });
});
