/**
 * /openapi.json stays true: every route the server registers is described, with its method,
 * and every described operation is a registered route; Redocly's recommended rules find no
 * error in it; its patterns agree with the checks they describe. (That real replies fit it:
 * openapi-replies.test.ts.)
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERRORS } from '../../../src/api/errors.js';
import { checkNumber, NUMBER_PATTERN } from '../../../src/api/numbers.js';
import { parseScheduleTime } from '../../../src/api/schedule-time.js';
import { parseDateBound } from '../../../src/api/validation.js';
import { openApiDocument } from '../../../src/ingress/http/openapi.js';
import { listRoutes } from '../../../src/ingress/http/server.js';
import { httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
let doc: { openapi: string; info: { version: string }; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref: string } }> } } }>; paths: Record<string, Record<string, { responses?: object }>>; components: { schemas: Record<string, Record<string, unknown>> } };
beforeAll(async () => {
  h = await httpHarness();
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await h.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** fastify's `/sms/status/:messageId` is OpenAPI's `/sms/status/{messageId}`. */
const asOpenApi = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('/openapi.json', () => {
  it('is OpenAPI 3.1, served without a token', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('describes every registered route', () => {
    const routes = listRoutes(h.app);
    expect(routes.length).toBe(20);
    for (const r of routes) expect(doc.paths[asOpenApi(r.url)]?.[r.method.toLowerCase()], `${r.method} ${r.url}`).toBeDefined();
  });

  it('describes nothing that is not registered', () => {
    const registered = new Set(listRoutes(h.app).map((r) => `${r.method.toLowerCase()} ${asOpenApi(r.url)}`));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((k) => METHODS.includes(k))) expect(registered, `${method} ${path}`).toContain(`${method} ${path}`);
    }
  });

  it('gives every operation its responses, and every errorCode', () => {
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) expect(op.responses).toBeDefined();
    expect(doc.components.schemas.ErrorBody).toMatchObject({ properties: { errorCode: { enum: Object.keys(API_ERRORS) } } });
  });

  it('describes the request bodies the server validates: strict, with their required fields', () => {
    expect(doc.components.schemas.SendSms).toMatchObject({ additionalProperties: false, required: ['senderId', 'destinationNumber', 'message', 'messageType'] });
    expect(doc.components.schemas.BulkRequest).toMatchObject({ additionalProperties: false, required: ['senderId', 'message', 'messageType'] });
    expect(Object.keys(doc.components.schemas.SendSms!.properties as object)).toEqual([
      'senderId', 'destinationNumber', 'message', 'messageType', 'charCount', 'smsParts', 'charLimit', 'expiryHour', 'campaignName',
      'isSchedule', 'time', 'gmt', 'repeat', 'delay', 'peId', 'templateId', 'telemarketerId',
    ]);
  });

  it('describes the Idempotency-Key header of both send endpoints, with its 409 and 422', () => {
    for (const path of ['/sms/sendSms', '/sms/sendbulk']) {
      const op = doc.paths[path]!.post as { parameters: Array<{ name: string; in: string; schema: object }>; responses: Record<string, { $ref: string }> };
      expect(op.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } }));
      expect(op.responses[422]).toEqual({ $ref: '#/components/responses/KeyReused' });
      expect(op.responses[409]).toEqual({ $ref: '#/components/responses/KeyInUse' });
    }
  });

  it('describes the two webhook requests smppd makes: status and inbound events', () => {
    expect(Object.keys(doc.webhooks)).toEqual(['status', 'inbound']);
    expect(doc.webhooks.status!.post.requestBody.content['application/json']!.schema.$ref).toBe('#/components/schemas/StatusEvent');
    expect(doc.components.schemas.StatusEvent).toMatchObject({
      required: ['type', 'messageId', 'channel', 'destination', 'status', 'timestamp', 'reason', 'batchId', 'part', 'parts', 'smscMessageId', 'receipt'],
    });
    expect(doc.components.schemas.InboundEvent).toMatchObject({ required: ['type', 'channel', 'inboundId', 'source', 'destination', 'text', 'receivedAt', 'parts', 'missingParts', 'dataCoding', 'malformed', 'problems', 'userData'] });
  });
});

/** Redocly's recommended rules' warnings the document keeps, and why. */
const KNOWN_WARNINGS = new Set([
  // POST /sms/lookup is always 501 (SMPP has no number lookup); /admin/login and /admin/logout answer 303.
  'operation-2xx-response',
  // The probes, /metrics and /openapi.json take no token and no input: nothing of theirs is a 4xx.
  'operation-4xx-response',
  // MethodNotAllowed answers a method no operation has, so no operation can name it; info.description does.
  'no-unused-components',
]);

describe('/openapi.json read by third-party tools', () => {
  it('has no error under Redocly\'s recommended rules, with the admin API or without', async () => {
    const config = await createConfig({ extends: ['recommended'] });
    for (const admin of [false, true]) {
      const found = await lintFromString({ source: JSON.stringify(openApiDocument({ admin })), absoluteRef: '/openapi.json', config });
      const report = found.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
      expect(report.filter((line) => line.startsWith('error')), `admin ${admin}`).toEqual([]);
      expect(found.filter((p) => !KNOWN_WARNINGS.has(p.ruleId)).map((p) => p.message), `admin ${admin}`).toEqual([]);
    }
  });

  it('names every operation by a unique operationId, the provider\'s where it has one', () => {
    const ids = Object.values(doc.paths).flatMap((item) => METHODS.flatMap((m) => {
      const op = item[m] as { operationId?: string } | undefined;
      return op === undefined ? [] : [op.operationId];
    }));
    expect(ids).not.toContain(undefined);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['sendSms', 'identify', 'sendbulk', 'listBatches', 'listSchedule', 'sendNow', 'abortSchedule', 'resendDlr', 'lookup']));
  });

  it('types the query ids as the integers the server enforces, closes sendbulk\'s parts, declares the 401 challenge and 405\'s Allow', () => {
    const op = (path: string, method: string) => doc.paths[path]![method] as { parameters: Array<{ name: string; schema: Record<string, unknown> }>; requestBody: { content: Record<string, { schema: object }> } };
    for (const [path, method, name] of [['/sms/edit', 'get', 'batch_Id'], ['/sms/abort', 'delete', 'batch_Id'], ['/sms/abort/schedule', 'delete', 'scheduleId'], ['/sms/send-now', 'post', 'scheduleId']] as const) {
      expect(op(path, method).parameters.find((p) => p.name === name)!.schema, `${path} ${name}`).toMatchObject({ type: 'integer', minimum: 1 });
    }
    expect(op('/sms/sendbulk', 'post').requestBody.content['multipart/form-data']!.schema)
      .toMatchObject({ required: ['destinationNumberFile', 'bulkRequest'], additionalProperties: false });
    const responses = (doc.components as unknown as { responses: Record<string, { headers: Record<string, { required: boolean }> }> }).responses;
    expect(responses.Unauthorized!.headers['WWW-Authenticate']).toMatchObject({ required: true });
    expect(responses.MethodNotAllowed!.headers.Allow).toMatchObject({ required: true });
    expect(doc.components.schemas.StatusEvent).toMatchObject({ properties: { receipt: { anyOf: [{ $ref: '#/components/schemas/Receipt' }, { type: 'null' }] } } });
    expect(Object.keys(doc.components.schemas.Receipt!.properties as object)).toEqual(['id', 'stat', 'err', 'sub', 'dlvrd', 'submitDate', 'doneDate', 'text', 'networkError', 'raw', 'warnings']);
  });

  it('gives destinationNumber the pattern of the number rule: the same strings pass', () => {
    const pattern = new RegExp(NUMBER_PATTERN);
    expect((doc.components.schemas.SendSms!.properties as Record<string, { pattern: string }>).destinationNumber!.pattern).toBe(NUMBER_PATTERN);
    fc.assert(fc.property(fc.stringMatching(/^[0-9+ a]{0,17}$/), (n) => pattern.test(n) === (checkNumber(n) === null)), { numRuns: 2_000 });
  });

  it('gives time and the resendDlr dates patterns that take every value the server takes', () => {
    const props = (schema: string) => doc.components.schemas[schema]!.properties as Record<string, { pattern: string }>;
    const time = new RegExp(props('SendSms').time!.pattern);
    const date = new RegExp(props('ResendDlr').startDate!.pattern);
    const two = (min: number, max: number) => fc.integer({ min, max }).map((n) => String(n).padStart(2, '0'));
    const local = fc.tuple(fc.integer({ min: 2000, max: 2100 }), two(1, 12), two(1, 28), fc.constantFrom('T', ' '), two(0, 23), two(0, 59), fc.option(two(0, 59)),
      fc.option(fc.stringMatching(/^[0-9]{1,3}$/)))
      .map(([y, mo, d, t, h, mi, s, ms]) => `${y}-${mo}-${d}${t}${h}:${mi}${s === null ? '' : `:${s}${ms === null ? '' : `.${ms}`}`}`);
    fc.assert(fc.property(local, (t) => parseScheduleTime(t, '+00:00').ok && time.test(t)), { numRuns: 500 });
    const zoned = fc.tuple(local, fc.constantFrom('Z', '+04:00', '-05:30')).map(([t, z]) => `${t}${z}`);
    fc.assert(fc.property(fc.oneof(zoned, local.map((t) => t.slice(0, 10))), (t) => parseDateBound(t) !== null && date.test(t)), { numRuns: 500 });
    for (const bad of ['01/11/2026', 'tomorrow', '2026-11-01T08']) expect([time.test(bad), date.test(bad)], bad).toEqual([false, false]);
    expect(date.test('2026-11-01 08:00'), 'an instant needs its zone').toBe(false);
  });
});
