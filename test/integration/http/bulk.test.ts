/**
 * POST /sms/sendbulk (messaging-service-api.md §4.1, §2.3): number files in CSV and TXT,
 * duplicates, invalid lines counted by reason, chunked commits, every multipart refusal.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, TOKENS, bearer, bulkForm, httpHarness, multipart, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness();
});
afterEach(async () => {
  await h.close(); // also fails if a token reached the log
});

const request = { senderId: 'MyBrand', message: 'Sale today', messageType: 'TEXT' };

function upload(form: { payload: Buffer; headers: Record<string, string> }, token: string = TOKENS.app, harness: Harness = h): Promise<LightMyRequestResponse> {
  return harness.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: { ...form.headers, ...bearer(token) }, payload: form.payload });
}

function expectError(res: LightMyRequestResponse, status: number, errorCode: string, text = ''): void {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status, errorCode, requestUri: '/sms/sendbulk' });
  expect(body.message).toContain(text);
}

const list = async () => (await h.app.inject({ method: 'GET', url: '/sms/list', headers: bearer() })).json();

describe('POST /sms/sendbulk accepts', () => {
  it('a CSV with a header: the first column, counts in bulkListInfo, one batch', async () => {
    const csv = 'phone,name\n447700900001,Ann\n447700900002,Bob\n"447700900003",Cy\n';
    const res = await upload(bulkForm({ ...request, campaignName: 'spring' }, csv));
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['status', 'bulkSessionId', 'credits', 'deductcredits', 'bulkListInfo']);
    expect(body).toEqual({
      status: 'success', bulkSessionId: expect.stringMatching(/^\d+$/), credits: '3', deductcredits: '3',
      bulkListInfo: { total: 3, validCount: 3, invalidCount: 0, duplicate: 0, errors: {} },
    });
    expect(await list()).toEqual([{
      id: Number(body.bulkSessionId), senderId: 'MyBrand', reqType: 'bulk', messageType: 'GSM-7', campaignName: 'spring',
      total: 3, processed: 0, pending: 3, active: true, createdOn: '2026-01-01T00:00:00',
    }]);
  });

  it('credits and deductcredits: the parts the batch costs, segments × valid numbers', async () => {
    // 161 GSM-7 characters are two segments; the invalid and the repeated number cost nothing.
    const csv = '447700900001\n447700900002\n12\n447700900001\n447700900003\n';
    const body = (await upload(bulkForm({ ...request, message: 'x'.repeat(161) }, csv))).json();
    expect(body).toMatchObject({ credits: '6', deductcredits: '6', bulkListInfo: { validCount: 3, invalidCount: 1, duplicate: 1 } });
    expect(h.acceptedMessages).toHaveLength(3);
  });

  it('a TXT file, CRLF line ends, a BOM, blank lines and no final newline', async () => {
    const txt = '\uFEFF447700900001\r\n\r\n447700900002\r\n   \n447700900003';
    const res = await upload(bulkForm(request, txt, 'numbers.txt'));
    expect(res.json().bulkListInfo).toEqual({ total: 3, validCount: 3, invalidCount: 0, duplicate: 0, errors: {} });
  });

  it('without its repeats, a file is sent in the order of its numbers\' first lines', async () => {
    const file = ['447700900003', '447700900001', '447700900002', '447700900001', '447700900003', '447700900004', '999999999999999'].join('\n');
    expect((await upload(bulkForm(request, file))).json().bulkListInfo).toEqual({ total: 7, validCount: 5, invalidCount: 0, duplicate: 2, errors: {} });
    expect(h.acceptedMessages.map((m) => m.destination)).toEqual(['447700900003', '447700900001', '447700900002', '447700900004', '999999999999999']);
  });

  it('removes duplicates unless allowDuplicate is true', async () => {
    const file = '447700900001\n447700900002\n447700900001\n447700900001\n';
    expect((await upload(bulkForm(request, file))).json().bulkListInfo).toEqual({ total: 4, validCount: 2, invalidCount: 0, duplicate: 2, errors: {} });
    expect((await upload(bulkForm({ ...request, allowDuplicate: false }, file))).json().bulkListInfo).toMatchObject({ validCount: 2, duplicate: 2 });
    const allowed = (await upload(bulkForm({ ...request, allowDuplicate: true }, file))).json();
    expect(allowed.bulkListInfo).toEqual({ total: 4, validCount: 4, invalidCount: 0, duplicate: 0, errors: {} });
    const totals = (await list() as Array<{ id: number; total: number }>).sort((a, b) => a.id - b.id).map((b) => b.total);
    expect(totals).toEqual([2, 2, 4]);
  });

  it('counts invalid lines by reason and sends the valid ones', async () => {
    const file = ['447700900001', '+447700900002', '00447700900003', '07700900004', '44 7700 900005', '44770090000x', '12345', '4477009000012345', '447700900001'].join('\n');
    const res = await upload(bulkForm(request, file));
    expect(res.json().bulkListInfo).toEqual({
      total: 9, validCount: 1, invalidCount: 7, duplicate: 1,
      errors: { plusPrefix: 1, doubleZeroPrefix: 1, leadingZero: 1, spaces: 1, notDigits: 1, tooShort: 1, tooLong: 1 },
    });
  });

  it('commits the numbers in chunks (1000 by default)', async () => {
    const file = Array.from({ length: 2_345 }, (_, i) => String(447_700_000_000 + i)).join('\n');
    const res = await upload(bulkForm(request, file));
    expect(res.json().bulkListInfo.validCount).toBe(2_345);
    expect(h.acceptSizes).toEqual([1000, 1000, 345]);
  });

  it('a long text gets its own concatenation reference for every number; a short one is the same bytes for all', async () => {
    const long = await upload(bulkForm({ ...request, message: 'x'.repeat(200) }, '447700900001\n447700900002\n447700900003\n'));
    expect(long.statusCode, long.body).toBe(200);
    const short = await upload(bulkForm(request, '447700900004\n447700900005\n'));
    expect(short.statusCode, short.body).toBe(200);
    const stored = h.acceptedMessages;
    const references = stored.filter((m) => m.parts.length === 2).map((m) => m.parts[0]!.sar?.refNum ?? m.parts[0]!.shortMessage.subarray(0, 6).toString('hex'));
    expect(references).toHaveLength(3);
    expect(new Set(references).size).toBe(3);
    const shortBodies = stored.filter((m) => m.parts.length === 1).map((m) => m.parts[0]!.shortMessage.toString('latin1'));
    expect(shortBodies).toHaveLength(2);
    expect(new Set(shortBodies).size).toBe(1);
    expect(stored.filter((m) => m.parts.length === 1).map((m) => m.destination)).toEqual(['447700900004', '447700900005']);
  });

  it('the file may come before bulkRequest', async () => {
    const form = multipart([
      { name: 'destinationNumberFile', value: '447700900001\n447700900002\n', filename: 'n.csv', contentType: 'text/csv' },
      { name: 'bulkRequest', value: JSON.stringify(request) },
    ]);
    const res = await upload(form);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().bulkListInfo.validCount).toBe(2);
  });

  it('bulkRequest sent with a JSON Content-Type', async () => {
    const form = multipart([
      { name: 'bulkRequest', value: JSON.stringify(request), contentType: 'application/json' },
      { name: 'destinationNumberFile', value: '447700900001\n', filename: 'n.txt' },
    ]);
    expect((await upload(form)).statusCode).toBe(200);
  });

  it('schedules the job with schedule, time and gmt', async () => {
    const res = await upload(bulkForm({ ...request, schedule: true, time: '2026-01-03 09:00:00', gmt: '-05:00', repeat: 'DAILY' }, '447700900001\n'));
    expect(res.statusCode, res.body).toBe(200);
    const schedules = (await h.app.inject({ method: 'GET', url: '/sms/listSchedule', headers: bearer() })).json();
    expect(schedules).toEqual([expect.objectContaining({ batchId: Number(res.json().bulkSessionId), state: 'scheduled', time: '2026-01-03T14:00:00.000Z',
      repeat: { every: 'DAILY', count: null, until: null, gmt: '-05:00' } })]);
  });
});

describe('POST /sms/sendbulk refuses', () => {
  it('a JSON body: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: bearer(), payload: { ...request, destinationNumber: '447700900001' } });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'multipart/form-data');
  });

  it('a url-encoded body: 415', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' });
    expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a missing part', async () => {
    expectError(await upload(multipart([{ name: 'bulkRequest', value: JSON.stringify(request) }])), 400, 'INVALID_MULTIPART', 'destinationNumberFile: is required');
    expectError(await upload(multipart([{ name: 'destinationNumberFile', value: '447700900001\n', filename: 'n.csv' }])), 400, 'INVALID_MULTIPART',
      'bulkRequest: is required');
  });

  it('an unknown part, or a part given twice', async () => {
    const file = { name: 'destinationNumberFile', value: '447700900001\n', filename: 'n.csv' };
    expectError(await upload(multipart([{ name: 'bulkRequest', value: JSON.stringify(request) }, { name: 'numbers', value: '1' }, file])),
      400, 'INVALID_MULTIPART', 'numbers: unknown part');
    expectError(await upload(multipart([{ name: 'bulkRequest', value: JSON.stringify(request) }, file, file])), 400, 'INVALID_MULTIPART', 'given twice');
  });

  it('a malformed multipart body', async () => {
    const cut = bulkForm(request, '447700900001\n');
    expectError(await upload({ ...cut, payload: cut.payload.subarray(0, cut.payload.length - 60) }), 400, 'INVALID_MULTIPART');
    expectError(await upload({ payload: Buffer.from('no parts here'), headers: { 'content-type': 'multipart/form-data' } }), 400, 'INVALID_MULTIPART');
    expect(await list()).toEqual([]);
  });

  it('bulkRequest that is not JSON, not an object, or has unknown or missing fields', async () => {
    const withRequest = (value: string) => upload(multipart([{ name: 'bulkRequest', value }, { name: 'destinationNumberFile', value: '447700900001\n', filename: 'n.csv' }]));
    expectError(await withRequest('{"senderId":'), 400, 'INVALID_JSON', 'bulkRequest: is not valid JSON');
    expectError(await withRequest('[]'), 400, 'VALIDATION', 'bulkRequest must be a JSON object');
    expectError(await withRequest(JSON.stringify({ ...request, to: 'x' })), 400, 'VALIDATION', 'bulkRequest.to: unknown field');
    expectError(await withRequest(JSON.stringify({ senderId: 'MyBrand', message: 'x' })), 400, 'VALIDATION', 'bulkRequest.messageType: is required');
    expectError(await withRequest(JSON.stringify({ ...request, schedule: true })), 400, 'VALIDATION', 'bulkRequest.time: is required when schedule is true');
  });

  it('bulkRequest sent as application/json that is not JSON', async () => {
    const form = multipart([
      { name: 'bulkRequest', value: '{"senderId":', contentType: 'application/json' },
      { name: 'destinationNumberFile', value: '447700900001\n', filename: 'n.txt' },
    ]);
    expectError(await upload(form), 400, 'INVALID_JSON', 'not valid JSON');
    expect(await list()).toEqual([]);
  });

  it('TEXT with characters outside GSM-7, before storing any number', async () => {
    expectError(await upload(bulkForm({ ...request, message: '“Sale”' }, '447700900001\n')), 400, 'TEXT_NOT_GSM7', '“');
    expect(h.acceptSizes).toEqual([]);
  });

  it('a sender the client may not use: 403', async () => {
    expectError(await upload(bulkForm({ ...request, senderId: 'Other' }, '447700900001\n'), TOKENS.limited), 403, 'SENDER_NOT_ALLOWED');
    expect((await upload(bulkForm(request, '447700900001\n'), TOKENS.limited)).statusCode).toBe(200);
  });

  it('a file that is not CSV or TXT', async () => {
    expectError(await upload(bulkForm(request, 'PK\u0003\u0004', 'numbers.xlsx')), 400, 'VALIDATION', 'must be a CSV or TXT file');
  });

  it('a file without any valid number, creating no batch', async () => {
    expectError(await upload(bulkForm(request, 'phone\n+447700900001\n0770\n')), 400, 'VALIDATION', 'holds no valid number (2 read, 2 invalid: plusPrefix 1, leadingZero 1');
    expect(await list()).toEqual([]);
  });

  it('a file over http.maxUploadBytes: 413 before reading it', async () => {
    const small = await httpHarness({ maxUploadBytes: 4096, maxBodyBytes: 1024 });
    try {
      const file = Array.from({ length: 1000 }, (_, i) => String(447_700_000_000 + i)).join('\n');
      const res = await upload(bulkForm(request, file), TOKENS.app, small);
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ errorCode: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('at most 4096 bytes') });
      expect(small.acceptSizes).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it('more numbers than http.maxBulkNumbers: 413 naming the key, nothing stored', async () => {
    const small = await httpHarness({ maxBulkNumbers: 3 });
    try {
      // Repeats count: each is held until the file has been read.
      const res = await upload(bulkForm(request, '447700900001\n447700900002\n447700900001\n447700900003\n'), TOKENS.app, small);
      expectError(res, 413, 'PAYLOAD_TOO_LARGE', 'destinationNumberFile: holds more than 3 numbers, the most one upload may have (http.maxBulkNumbers): split it');
      expect(small.acceptSizes).toEqual([]);
      expect((await upload(bulkForm(request, 'phone\n447700900001\nbad\n447700900002\n447700900003\n'), TOKENS.app, small)).statusCode).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('an upload whose parts would pass limits.maxQueued: 429, refused whole before any number is stored', async () => {
    const capped = await httpHarness({ maxQueued: 5 });
    try {
      const six = Array.from({ length: 6 }, (_, i) => String(447_700_900_001 + i)).join('\n');
      const res = await upload(bulkForm(request, six), TOKENS.app, capped);
      expectError(res, 429, 'QUEUE_FULL', 'this request needs 6 queued parts, more than limits.maxQueued (5) allows: split it');
      expect(res.headers['retry-after']).toBe('1');
      expect(capped.acceptSizes).toEqual([]);
      // Parts, not numbers: a text of two parts to three numbers is six.
      const long = { ...request, message: 'x'.repeat(200) };
      expectError(await upload(bulkForm(long, '447700900001\n447700900002\n447700900003\n'), TOKENS.app, capped), 429, 'QUEUE_FULL', 'needs 6 queued parts');
      expect((await upload(bulkForm(long, '447700900001\n447700900002\n'), TOKENS.app, capped)).statusCode).toBe(200);
      // Stored and counted (by the next reading of the store, too): 4 of 5 are taken.
      capped.clock.advance(1_000);
      expectError(await upload(bulkForm(request, '447700900004\n447700900005\n'), TOKENS.app, capped), 429, 'QUEUE_FULL',
        'the queue holds 4 parts; limits.maxQueued is 5 and this request needs 2 more: retry later');
      expect((await upload(bulkForm(request, '447700900004\n'), TOKENS.other, capped)).statusCode).toBe(200);
      expect(capped.acceptSizes).toEqual([2, 1]);
    } finally {
      await capped.close();
    }
  });

  it('an upload that would pass the client\'s clients[].maxQueued: 429 naming it; another client\'s upload goes', async () => {
    const capped = await httpHarness({ clientMaxQueued: { app: 2 } });
    try {
      const three = '447700900001\n447700900002\n447700900003\n';
      expectError(await upload(bulkForm(request, three), TOKENS.app, capped), 429, 'QUEUE_FULL', 'this request needs 3 queued parts, more than clients[].maxQueued (2) allows: split it');
      expect((await upload(bulkForm(request, three), TOKENS.other, capped)).statusCode).toBe(200);
      expect((await upload(bulkForm(request, '447700900001\n'), TOKENS.app, capped)).statusCode).toBe(200);
      expectError(await upload(bulkForm(request, '447700900002\n447700900003\n'), TOKENS.app, capped), 429, 'QUEUE_FULL',
        'client app has 1 part queued; clients[].maxQueued is 2 and this request needs 2 more: retry later');
      expect(capped.acceptSizes).toEqual([3, 1]);
    } finally {
      await capped.close();
    }
  });

  it('two uploads at once cannot both pass through the same room', async () => {
    const capped = await httpHarness({ maxQueued: 10 });
    try {
      const six = (base: number) => Array.from({ length: 6 }, (_, i) => String(base + i)).join('\n');
      const both = await Promise.all([upload(bulkForm(request, six(447_700_900_001)), TOKENS.app, capped), upload(bulkForm(request, six(447_700_800_001)), TOKENS.other, capped)]);
      expect(both.map((r) => r.statusCode).sort()).toEqual([200, 429]);
      expect(capped.acceptSizes).toEqual([6]);
    } finally {
      await capped.close();
    }
  });

  it('a store failure part way: 500, and the batch its first chunks began is aborted', async () => {
    const accept = h.store.accept.bind(h.store);
    let calls = 0;
    h.store.accept = async (r) => {
      if (++calls === 2) throw new Error('disk full');
      return accept(r);
    };
    const file = Array.from({ length: 2_345 }, (_, i) => String(447_700_000_000 + i)).join('\n');
    expectError(await upload(bulkForm(request, file)), 500, 'INTERNAL');
    expect(h.acceptSizes).toEqual([1000]);
    expect((await list()).map((b: { active: boolean; total: number }) => [b.active, b.total])).toEqual([[false, 1000]]);
    expect(h.logs.some((l) => l.includes('bulk_abandoned'))).toBe(true);
  });

  it('above limits.maxQueued: 429 with Retry-After', async () => {
    const full = await httpHarness({ maxQueued: 0 });
    try {
      const res = await upload(bulkForm(request, '447700900001\n'), TOKENS.app, full);
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json().errorCode).toBe('QUEUE_FULL');
    } finally {
      await full.close();
    }
  });
});
