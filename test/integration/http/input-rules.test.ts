/**
 * What a send may carry to the wire, the store or a log: the sender ID rule and the free-text
 * rule, the same for sendSms and sendbulk's bulkRequest, each refusal a 400 VALIDATION in the
 * five-field body that names the field, and nothing stored for it. /openapi.json describes them.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_FIELDS, bearer, bulkForm, httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness({ webhookClients: ['app'] }); // resendDlr serves only a client with a webhook
});
afterEach(async () => {
  await h.close();
});

const valid = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };
const bulkValid = { senderId: 'MyBrand', message: 'Hello', messageType: 'TEXT' };

const sendSms = (body: object) => h.app.inject({ method: 'POST', url: '/sms/sendSms', headers: bearer(), payload: body });
const sendBulk = (request: object) => {
  const form = bulkForm(request, '447700900001\n');
  return h.app.inject({ method: 'POST', url: '/sms/sendbulk', headers: { ...form.headers, ...bearer() }, payload: form.payload });
};

function expectRefused(res: LightMyRequestResponse, text: string, requestUri: string): void {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(Object.keys(body)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status: 400, errorCode: 'VALIDATION', requestUri });
  expect(body.message).toContain(text);
  // A refused value is described, never echoed raw: no control character reaches the body.
  expect([...String(body.message)].filter((c) => /\p{Cc}|\p{Bidi_Control}/u.test(c))).toEqual([]);
}

describe('senderId follows what SMPP and networks carry', () => {
  const refused: Array<[string, string, string]> = [
    ['a NUL, which would end source_addr and make the rest the next fields', 'AB\u0000\u0001\u00014477', 'senderId: must not hold U+0000'],
    ['U+0100, which an ASCII encoder writes as a NUL', 'AB\u0100', 'senderId: must not hold U+0100'],
    ['a character outside ASCII', 'Müller', 'senderId: must not hold U+00FC'],
    ['12 letters', 'ABCDEFGHIJKL', 'senderId: is 12 characters; an alphanumeric sender ID is at most 11'],
    ['a number with +', '+4477009001', 'senderId: has no letter'],
    ['16 digits', '4477009001234567', 'senderId: is 16 digits'],
    ['a national number', '07700900123', 'senderId: starts with 0'],
    ['a bidirectional override', 'Bank\u202e', 'senderId: must not hold U+202E'],
  ];
  for (const [what, senderId, text] of refused) {
    it(`refuses ${what}, in sendSms and in bulkRequest, storing nothing`, async () => {
      expectRefused(await sendSms({ ...valid, senderId }), text, '/sms/sendSms');
      expectRefused(await sendBulk({ ...bulkValid, senderId }), `bulkRequest.${text}`, '/sms/sendbulk');
      expect(h.acceptSizes).toEqual([]);
    });
  }

  it('stores each kind with its TON/NPI', async () => {
    for (const [senderId, ton, npi] of [['MyBrand', 5, 0], ['447700900000', 1, 1], ['12345', 3, 0]] as const) {
      expect((await sendSms({ ...valid, senderId })).statusCode).toBe(200);
      expect(h.acceptedMessages.at(-1)).toMatchObject({ source: senderId, sourceTon: ton, sourceNpi: npi });
    }
  });
});

describe('free text has a length and a character rule', () => {
  const fields: Array<[string, number]> = [['campaignName', 255], ['peId', 64], ['templateId', 64], ['telemarketerId', 64], ['gmt', 64], ['time', 32]];
  for (const [field, max] of fields) {
    it(`${field}: at most ${max} characters, no control, bidirectional or lone surrogate characters`, async () => {
      for (const [value, text] of [
        ['x'.repeat(max + 1), `${field}: must be at most ${max} characters`],
        ['spring\u0000', `${field}: must not hold U+0000 (character 7)`],
        ['line\nbreak', `${field}: must not hold U+000A`],
        ['\u001b[31mred', `${field}: must not hold U+001B`],
        ['a\u2028b', `${field}: must not hold U+2028`],
        ['evil\u202etxt', `${field}: must not hold U+202E`],
        ['Acme\u200f 5', `${field}: must not hold U+200F`],
        ['ltr\u200emark', `${field}: must not hold U+200E`],
        ['arabic\u061cmark', `${field}: must not hold U+061C`],
        ['half \ud800', `${field}: must not hold an unpaired UTF-16 surrogate (U+D800`],
      ] as const) {
        expectRefused(await sendSms({ ...valid, [field]: value }), text, '/sms/sendSms');
        expectRefused(await sendBulk({ ...bulkValid, [field]: value }), `bulkRequest.${text}`, '/sms/sendbulk');
      }
      expect(h.acceptSizes).toEqual([]);
    });
  }

  it('takes the longest value and any printable Unicode, emoji pairs included', async () => {
    const res = await sendSms({ ...valid, campaignName: `Été — 春 😀 ${'x'.repeat(240)}`, peId: 'p'.repeat(64), templateId: '1107160000000000000' });
    expect(res.statusCode, res.body).toBe(200);
    expect(h.acceptedMessages.at(-1)?.campaignName).toBe(`Été — 春 😀 ${'x'.repeat(240)}`);
  });

  it('resendDlr: a senderId filter of at most 20 characters by the same rule', async () => {
    const resend = (senderId: string) => h.app.inject({ method: 'POST', url: '/sms/resendDlr', headers: bearer(), payload: { startDate: '2026-01-01', endDate: '2026-01-01', senderId } });
    expectRefused(await resend('x'.repeat(21)), 'senderId: must be at most 20 characters', '/sms/resendDlr');
    expectRefused(await resend('AB\u0000'), 'senderId: must not hold U+0000', '/sms/resendDlr');
  });
});

describe('a message with half a surrogate pair', () => {
  for (const messageType of ['UNICODE', 'TEXT']) {
    it(`is refused as ${messageType}, naming message, before anything is stored`, async () => {
      for (const message of ['a\ud800b', 'end \ud83d', '\ude00 start']) {
        expectRefused(await sendSms({ ...valid, messageType, message }), 'message: holds an unpaired UTF-16 surrogate', '/sms/sendSms');
        expectRefused(await sendBulk({ ...bulkValid, messageType, message }), 'bulkRequest.message: holds an unpaired UTF-16 surrogate', '/sms/sendbulk');
      }
      expect(h.acceptSizes).toEqual([]);
    });
  }

  it('a whole pair is fine', async () => {
    expect((await sendSms({ ...valid, messageType: 'UNICODE', message: 'hi 😀' })).statusCode).toBe(200);
  });
});

describe('/openapi.json', () => {
  it('describes the rules: the sender ID rule, each free-text maximum and character rule', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> } };
    for (const schema of ['SendSms', 'BulkRequest']) {
      const p = doc.components.schemas[schema]!.properties;
      expect(p.senderId).toMatchObject({ maxLength: 15, description: expect.stringContaining('11 at most of A–Z a–z 0–9') });
      expect(JSON.stringify(p.campaignName)).toContain('"maxLength":255');
      for (const field of ['campaignName', 'peId', 'templateId', 'telemarketerId', 'time', 'gmt']) {
        expect(String(p[field]!.description), `${schema}.${field}`).toContain('no control characters');
      }
      expect(String(p.message!.description)).toContain('unpaired one is refused');
    }
  });
});
