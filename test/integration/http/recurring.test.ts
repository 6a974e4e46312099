/**
 * A recurring sendSms over HTTP: listSchedule shows the series and its next run as the runs are
 * released (the dispatcher's releaseDue, called here at the runs' times), send-now sends the
 * pending run and the series goes on, abort/schedule ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, TOKENS, bearer, httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await httpHarness();
});
afterAll(async () => {
  await h.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(TOKENS.app), ...(payload ? { payload } : {}) });
const send = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Your weekly digest', messageType: 'TEXT', isSchedule: true, gmt: 'Europe/London' };
/** 09:00 London on 28 March 2026 (GMT), the day before the clocks go forward. */
const FIRST = Date.UTC(2026, 2, 28, 9);

describe('a recurring sendSms', () => {
  it('is listed with its series and next run; each run is a batch; abort/schedule ends the series', async () => {
    const res = await call('POST', '/sms/sendSms', { ...send, time: '2026-03-28 09:00', repeat: { every: 'daily', count: 5 } });
    expect(res.statusCode, res.body).toBe(200);
    const firstBatch = (await h.store.getMessage(res.body))!.batchId;
    const [listed] = (await call('GET', '/sms/listSchedule')).json() as Array<Record<string, unknown>>;
    expect(listed).toMatchObject({
      batchId: firstBatch, state: 'scheduled', time: '2026-03-28T09:00:00.000Z', runs: 0, lastRun: null, total: 1,
      repeat: { every: 'DAILY', count: 5, until: null, gmt: 'Europe/London' },
    });

    await h.store.releaseDue(FIRST);
    const [afterRun] = (await call('GET', '/sms/listSchedule')).json() as Array<Record<string, unknown>>;
    // 09:00 BST on the 29th is 08:00Z.
    expect(afterRun).toMatchObject({ id: listed!.id, state: 'scheduled', time: '2026-03-29T08:00:00.000Z', runs: 1, lastRun: '2026-03-28T09:00:00.000Z' });
    expect(afterRun!.batchId).not.toBe(firstBatch);
    const batches = (await call('GET', '/sms/list')).json() as Array<{ id: number }>;
    expect(batches.map((b) => b.id)).toEqual([afterRun!.batchId, firstBatch]);

    // send-now sends the pending run at once; the next is the 30th's.
    const sentNow = await call('POST', `/sms/send-now?scheduleId=${String(listed!.id)}`);
    expect(sentNow.json()).toMatchObject({ state: 'scheduled', time: '2026-03-30T08:00:00.000Z', runs: 2, lastRun: new Date(h.clock.wallNow()).toISOString() });

    const aborted = await call('DELETE', `/sms/abort/schedule?scheduleId=${String(listed!.id)}`);
    expect(aborted.json()).toMatchObject({ id: listed!.id, state: 'cancelled', runs: 2 });
    const pending = aborted.json().batchId as number;
    expect((await call('GET', `/sms/edit?batch_Id=${pending}`)).json()).toMatchObject({ total: 1, processed: 1, pending: 0 });
    // The runs released before are untouched: the first message is still on its way.
    expect((await call('GET', `/sms/status/${res.body}`)).json()).toMatchObject({ status: 'SUBMITTED' });
    expect(await h.store.releaseDue(FIRST + 30 * 86_400_000)).toBe(0);
  });

  it('refuses a repeat it does not know, or one without a schedule, naming the field', async () => {
    for (const [body, text] of [
      [{ ...send, time: '2026-03-28 09:00', repeat: 'yearly' }, 'repeat: must be DAILY, WEEKLY, MONTHLY (any case), or an object'],
      [{ ...send, time: '2026-03-28 09:00', repeat: { every: 'DAILY', count: 0 } }, 'repeat.count: must be a whole number from 1 to 1000'],
      [{ ...send, isSchedule: false, repeat: 'DAILY' }, 'repeat: needs isSchedule true and a time'],
    ] as const) {
      const res = await call('POST', '/sms/sendSms', body);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json())).toEqual(ERROR_FIELDS);
      expect(res.json()).toMatchObject({ errorCode: 'VALIDATION', message: expect.stringContaining(text) });
    }
  });
});
