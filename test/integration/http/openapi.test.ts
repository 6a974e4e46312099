/**
 * /openapi.json stays true: every route the server registers is described, with its method,
 * and every described operation is a registered route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ERRORS } from '../../../src/api/errors.js';
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
