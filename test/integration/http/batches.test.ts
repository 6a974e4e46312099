/**
 * Batch control (messaging-service-api.md §3.3) and scheduled campaigns (§3.4) over HTTP:
 * every transition the tables allow, every one they do not (400 with the table's condition),
 * unknown and foreign ids (404).
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, TOKENS, bearer, bulkForm, httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness();
});
afterEach(async () => {
  await h.close();
});

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string = TOKENS.app, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

function expectError(res: LightMyRequestResponse, status: number, errorCode: string, text: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(Object.keys(res.json())).toEqual(ERROR_FIELDS);
  expect(res.json()).toMatchObject({ status, errorCode, message: expect.stringContaining(text) });
}

async function bulk(numbers = 3): Promise<number> {
  const file = Array.from({ length: numbers }, (_, i) => String(447_700_900_000 + i)).join('\n');
  const form = bulkForm({ senderId: 'MyBrand', message: 'Sale', messageType: 'TEXT' }, file);
  const res = await h.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: { ...form.headers, ...bearer() }, payload: form.payload });
  return Number(res.json().bulkSessionId);
}

describe('batch control (§3.3)', () => {
  it('GET /sms/list answers §2.4 entries, only the client’s own', async () => {
    const id = await bulk(2);
    const res = await call('GET', '/sms/list');
    expect(res.json()).toEqual([{
      id, senderId: 'MyBrand', reqType: 'bulk', messageType: 'GSM-7', campaignName: '', total: 2, processed: 0, pending: 2, active: true, createdOn: '2026-01-01T00:00:00',
    }]);
    expect((await call('GET', '/sms/list', TOKENS.other)).json()).toEqual([]);
  });

  it('GET /sms/edit answers the entry with its state', async () => {
    const id = await bulk();
    expect((await call('GET', `/sms/edit?batch_Id=${id}`)).json()).toMatchObject({ id, total: 3, active: true, state: 'active', scheduleId: null });
  });

  it('active → pause → paused → resume → active → abort → aborted', async () => {
    const id = await bulk();
    const paused = await call('GET', `/sms/pause?batch_Id=${id}`);
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ id, state: 'paused', active: false });
    expect((await call('GET', `/sms/resume?batch_Id=${id}`)).json()).toMatchObject({ state: 'active', active: true });
    const aborted = await call('DELETE', `/sms/abort?batch_Id=${id}`);
    expect(aborted.json()).toMatchObject({ state: 'aborted', active: false, processed: 3, pending: 0 });
  });

  it('a paused batch can be aborted, and its pending messages become FAILED', async () => {
    const id = await bulk(1);
    await call('GET', `/sms/pause?batch_Id=${id}`);
    expect((await call('DELETE', `/sms/abort?batch_Id=${id}`)).json()).toMatchObject({ state: 'aborted' });
    const [batch] = await h.store.listBatches('app');
    expect(batch?.state).toBe('aborted');
  });

  it('refuses the transitions the table does not have, with its condition', async () => {
    const id = await bulk();
    expectError(await call('GET', `/sms/resume?batch_Id=${id}`), 400, 'INVALID_STATE', `batch ${id} is active: only paused batches can be resumed`);
    await call('GET', `/sms/pause?batch_Id=${id}`);
    expectError(await call('GET', `/sms/pause?batch_Id=${id}`), 400, 'INVALID_STATE', `batch ${id} is paused: only active batches can be paused`);
    await call('DELETE', `/sms/abort?batch_Id=${id}`);
    expectError(await call('GET', `/sms/pause?batch_Id=${id}`), 400, 'INVALID_STATE', 'is aborted: only active batches can be paused');
    expectError(await call('GET', `/sms/resume?batch_Id=${id}`), 400, 'INVALID_STATE', 'is aborted: only paused batches can be resumed');
    expectError(await call('DELETE', `/sms/abort?batch_Id=${id}`), 400, 'INVALID_STATE', 'only active or paused batches can be aborted');
  });

  it('an abort racing a resume leaves the batch aborted', async () => {
    const id = await bulk();
    await call('GET', `/sms/pause?batch_Id=${id}`);
    const [abort, resume] = await Promise.all([call('DELETE', `/sms/abort?batch_Id=${id}`), call('GET', `/sms/resume?batch_Id=${id}`)]);
    expect(abort.statusCode).toBe(200);
    expect(resume.statusCode).toBe(400);
    expect((await call('GET', `/sms/edit?batch_Id=${id}`)).json().state).toBe('aborted');
  });

  it('an unknown batch, or another client’s, is 404; a missing or malformed batch_Id is 400', async () => {
    const id = await bulk();
    for (const [method, path] of [['GET', '/sms/edit'], ['GET', '/sms/pause'], ['GET', '/sms/resume'], ['DELETE', '/sms/abort']] as const) {
      expectError(await call(method, `${path}?batch_Id=999`), 404, 'BATCH_NOT_FOUND', 'no batch 999 for this client');
      expectError(await call(method, `${path}?batch_Id=${id}`, TOKENS.other), 404, 'BATCH_NOT_FOUND', `no batch ${id}`);
      expectError(await call(method, path), 400, 'VALIDATION', 'batch_Id: is required');
      expectError(await call(method, `${path}?batch_Id=abc`), 400, 'VALIDATION', 'batch_Id: must be a whole number');
      expectError(await call(method, `${path}?batchId=${id}`), 400, 'VALIDATION', 'batch_Id: is required');
    }
    expect((await call('GET', `/sms/edit?batch_Id=${id}`)).json().state).toBe('active');
  });

  it('a control call with the wrong method is 405, with the method it takes in Allow, and changes nothing', async () => {
    const id = await bulk();
    const pause = await call('POST', `/sms/pause?batch_Id=${id}`);
    expectError(pause, 405, 'METHOD_NOT_ALLOWED', '/sms/pause takes GET, not POST');
    expect(pause.headers.allow).toBe('GET');
    const abort = await call('GET', `/sms/abort?batch_Id=${id}`);
    expectError(abort, 405, 'METHOD_NOT_ALLOWED', '/sms/abort takes DELETE, not GET');
    expect(abort.headers.allow).toBe('DELETE');
    expect((await call('GET', `/sms/edit?batch_Id=${id}`)).json().state).toBe('active');
  });
});

describe('scheduled campaigns (§3.4)', () => {
  const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Later', messageType: 'TEXT', isSchedule: true, time: '2026-01-05 08:00' };

  async function schedule(token: string = TOKENS.app): Promise<{ scheduleId: number; messageId: string }> {
    const res = await h.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(token), payload: valid });
    expect(res.statusCode, res.body).toBe(200);
    const list = (await call('GET', '/sms/listSchedule', token)).json() as Array<{ id: number; batchId: number }>;
    const message = await h.store.getMessage(res.body);
    return { scheduleId: list.find((s) => s.batchId === message?.batchId)!.id, messageId: res.body };
  }

  it('GET /sms/listSchedule lists the client’s schedules with an id', async () => {
    const { scheduleId } = await schedule();
    const list = (await call('GET', '/sms/listSchedule')).json();
    expect(list).toEqual([{
      id: scheduleId, batchId: expect.any(Number), state: 'scheduled', time: '2026-01-05T08:00:00.000Z', repeat: null, runs: 0, lastRun: null,
      senderId: 'MyBrand', campaignName: '', total: 1, createdAt: '2026-01-01T00:00:00.000Z',
    }]);
    expect((await call('GET', '/sms/listSchedule', TOKENS.other)).json()).toEqual([]);
  });

  it('send-now releases a schedule (id in the query), once', async () => {
    const { scheduleId } = await schedule();
    const res = await call('POST', `/sms/send-now?scheduleId=${scheduleId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: scheduleId, state: 'released', time: '2026-01-05T08:00:00.000Z', runs: 1, lastRun: '2026-01-01T00:00:00.000Z' });
    expectError(await call('POST', `/sms/send-now?scheduleId=${scheduleId}`), 400, 'INVALID_STATE', `schedule ${scheduleId} is released: only scheduled campaigns can be sent now`);
    expectError(await call('DELETE', `/sms/abort/schedule?scheduleId=${scheduleId}`), 400, 'INVALID_STATE', 'only scheduled campaigns can be cancelled');
  });

  it('send-now takes the id from a JSON body too, as a number or a string', async () => {
    const a = await schedule();
    const b = await schedule();
    expect((await call('POST', '/sms/send-now', TOKENS.app, { scheduleId: a.scheduleId })).json()).toMatchObject({ id: a.scheduleId, state: 'released' });
    expect((await call('POST', '/sms/send-now', TOKENS.app, { scheduleId: String(b.scheduleId) })).json()).toMatchObject({ id: b.scheduleId, state: 'released' });
  });

  it('send-now refuses a missing id, two different ids, unknown fields, and another client’s schedule', async () => {
    const { scheduleId } = await schedule();
    expectError(await call('POST', '/sms/send-now'), 400, 'VALIDATION', 'scheduleId: is required');
    expectError(await call('POST', `/sms/send-now?scheduleId=${scheduleId}`, TOKENS.app, { scheduleId: scheduleId + 1 }), 400, 'VALIDATION', 'different schedules');
    expectError(await call('POST', '/sms/send-now', TOKENS.app, { id: scheduleId }), 400, 'VALIDATION', 'id: unknown field');
    expectError(await call('POST', '/sms/send-now?scheduleId=999'), 404, 'SCHEDULE_NOT_FOUND', 'no schedule 999');
    expectError(await call('POST', `/sms/send-now?scheduleId=${scheduleId}`, TOKENS.other), 404, 'SCHEDULE_NOT_FOUND', `no schedule ${scheduleId}`);
  });

  it('abort/schedule cancels it and its message becomes FAILED', async () => {
    const { scheduleId, messageId } = await schedule();
    const res = await call('DELETE', `/sms/abort/schedule?scheduleId=${scheduleId}`);
    expect(res.json()).toMatchObject({ id: scheduleId, state: 'cancelled', runs: 0, lastRun: null });
    expect((await call('GET', `/sms/status/${messageId}`)).json()).toMatchObject({ status: 'FAILED', reason: 'schedule cancelled' });
    const { batchId } = (await call('GET', '/sms/listSchedule')).json()[0];
    expect((await call('GET', `/sms/edit?batch_Id=${batchId}`)).json()).toMatchObject({ state: 'aborted', active: false });
    expectError(await call('POST', `/sms/send-now?scheduleId=${scheduleId}`), 400, 'INVALID_STATE', 'is cancelled');
    expectError(await call('DELETE', '/sms/abort/schedule'), 400, 'VALIDATION', 'scheduleId: is required');
    expectError(await call('DELETE', '/sms/abort/schedule?scheduleId=999'), 404, 'SCHEDULE_NOT_FOUND', 'no schedule 999');
  });
});
