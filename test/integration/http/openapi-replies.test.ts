/**
 * /openapi.json holds for what the daemon really answers: a daemon (`startDaemon` from a parsed
 * config) over a real socket, sending to the SMSC simulator, is called on every operation of the
 * document, with success and its main refusals (400, 401, 403, 404, 405, 415, 422, 429), and each
 * reply's status, declared headers and body are validated against the document with ajv (JSON
 * Schema 2020-12, formats checked); so are the webhook requests it makes (status events with a
 * receipt, an inbound event).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import type { Pool } from '../../../src/smpp/pool.js';
import { until } from '../../support/engine.js';
import { bulkForm } from '../../support/http.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const TOKENS = { app: 'openapi-app-token-0123456789', limited: 'openapi-limited-token-0123456789', admin: 'openapi-admin-token-0123456789' } as const;
const SYSTEM_ID = 'oas';
const PASSWORD = 'oaspw';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Json = Record<string, unknown>;
interface Doc { paths: Record<string, Record<string, Json>>; webhooks: Record<string, { post: Json }>; components: { responses: Record<string, Json> } }

// ajv-formats is CommonJS: the plugin is its exports' `default`.
const addFormats = addFormatsModule.default;

let sim: SmscSimulator;
let hook: WebhookReceiver;
let d: RunningDaemon;
let base: string;
let dir: string;
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: SYSTEM_ID, password: PASSWORD }], behaviour: { receipts: { delayMs: 0 } } },
    new SystemClock(), silentLog);
  const { port } = await sim.start();
  hook = await startWebhookReceiver();
  dir = mkdtempSync(join(tmpdir(), 'smppd-openapi-'));
  const config = await parseConfig(JSON.stringify({
    log: { level: 'silent' },
    http: { listen: '127.0.0.1:0' },
    clients: [
      { name: 'app', token: TOKENS.app, inboundNumbers: ['12345'], webhook: { url: hook.url, allowHttp: true, retry: { initialSeconds: 0.05, maxSeconds: 0.2 } } },
      // One send at first, then one every 100 s: its second send is refused 429.
      { name: 'limited', token: TOKENS.limited, senders: ['Allowed'], rateLimit: { perSecond: 0.01, burst: 1 } },
    ],
    admin: { tokens: [{ name: 'ops', token: TOKENS.admin }] },
    store: { path: 'smppd.db' },
    upstreams: [{ name: 'sim', host: '127.0.0.1', port, systemId: SYSTEM_ID, password: PASSWORD, binds: 1 }],
  }), dir);
  let pool: Pool | undefined;
  const metrics = new Metrics(() => pool?.stats() ?? [], { processMetrics: false });
  d = await startDaemon(config, { clock: new SystemClock(), log: silentLog, metrics, onPool: (p) => { pool = p; } });
  base = `http://127.0.0.1:${d.http.port}`;
  doc = await (await fetch(`${base}/openapi.json`)).json() as Doc;
  ajv.addSchema(doc, 'openapi.json');
  await until(() => d.upstreams().some((u) => u.available), 10_000, 'a bind bound');
}, 30_000);

afterAll(async () => {
  await d?.stop();
  await hook?.close();
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** JSON Pointer escaping (RFC 6901). */
const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Validates `value` against the schema at `pointer` of the document; the errors, or []. */
function problems(pointer: string, value: unknown): string[] {
  const validate = ajv.getSchema(`openapi.json#${pointer}`) ?? ajv.compile({ $ref: `openapi.json#${pointer}` });
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

/** The response object for `status` at `pointer`, its $ref followed: the pointer it is at, and it. */
function responseAt(pointer: string, response: Json | undefined): { pointer: string; response: Json } | undefined {
  if (response === undefined) return undefined;
  const target = response.$ref;
  if (typeof target !== 'string') return { pointer, response };
  const name = target.replace('#/components/responses/', '');
  return { pointer: `/components/responses/${escape(name)}`, response: doc.components.responses[name]! };
}

interface Reply { status: number; headers: Headers; text: string }
const called = new Set<string>();

/**
 * Checks one reply against the document: its status is described for the operation (405: by
 * components.responses.MethodNotAllowed), each required header is there and fits its schema,
 * its Content-Type is described and its body fits that schema.
 */
function expectDescribed(method: string, template: string, reply: Reply): void {
  const what = `${method} ${template} ${reply.status}: ${reply.text.slice(0, 300)}`;
  const m = method.toLowerCase();
  const operation = doc.paths[template]?.[m] as { operationId: string; responses: Record<string, Json> } | undefined;
  let found: { pointer: string; response: Json } | undefined;
  if (reply.status === 405) {
    expect(operation, `${what}: a described operation answered 405`).toBeUndefined();
    expect(doc.paths[template], `${what}: not a path of the document`).toBeDefined();
    found = responseAt('', { $ref: '#/components/responses/MethodNotAllowed' });
  } else {
    expect(operation, `${what}: no such operation`).toBeDefined();
    const pointer = `/paths/${escape(template)}/${m}/responses/${reply.status}`;
    found = responseAt(pointer, operation!.responses[String(reply.status)]);
    if (reply.status < 400) called.add(operation!.operationId);
  }
  expect(found, `${what}: status not described`).toBeDefined();
  const { pointer, response } = found!;
  for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, { required?: boolean; schema: Json }>)) {
    const value = reply.headers.get(name);
    if (value === null) {
      expect(header.required, `${what}: header ${name} missing`).not.toBe(true);
      continue;
    }
    const typed = header.schema.type === 'integer' ? Number(value) : value;
    expect(problems(`${pointer}/headers/${escape(name)}/schema`, typed), `${what}: header ${name}: ${value}`).toEqual([]);
  }
  const content = response.content as Record<string, unknown> | undefined;
  if (content === undefined) return;
  const type = (reply.headers.get('content-type') ?? '').split(';')[0]!.trim();
  expect(Object.keys(content), `${what}: Content-Type ${type}`).toContain(type);
  const body = type === 'application/json' ? JSON.parse(reply.text) as unknown : reply.text;
  expect(problems(`${pointer}/content/${escape(type)}/schema`, body), what).toEqual([]);
}

/** Calls the daemon and checks the reply; `template` is the document's path when it has a parameter. */
async function call(method: string, path: string, o: { token?: keyof typeof TOKENS | null; json?: unknown; body?: Buffer | string; headers?: Record<string, string>; template?: string } = {}): Promise<Reply> {
  const token = o.token === undefined ? 'app' : o.token;
  const headers: Record<string, string> = { ...(token === null ? {} : { authorization: `Bearer ${TOKENS[token]}` }), ...o.headers };
  if (o.json !== undefined) headers['content-type'] ??= 'application/json';
  const body = o.json !== undefined ? JSON.stringify(o.json) : o.body;
  const res = await fetch(`${base}${path}`, { method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });
  const reply = { status: res.status, headers: res.headers, text: await res.text() };
  expectDescribed(method, o.template ?? path.split('?')[0]!, reply);
  return reply;
}

const SMS = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'hello', messageType: 'TEXT' };
/** A local time an hour from now, as sendSms takes it. */
const later = (): string => new Date(Date.now() + 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
const today = (): string => new Date().toISOString().slice(0, 10);

describe('every operation answers as /openapi.json describes', () => {
  it('sends, jobs, schedules, status, events and probes: success and refusals', async () => {
    const sent = await call('POST', '/sms/sendSms', { json: SMS, headers: { 'idempotency-key': 'oas-key-1' } });
    expect(sent.status).toBe(200);
    expect((await call('POST', '/sms/sendSms', { json: { ...SMS, message: 'other' }, headers: { 'idempotency-key': 'oas-key-1' } })).status).toBe(422);
    expect((await call('POST', '/sms/sendSms', { json: { ...SMS, destinationNumber: '+44 7700' } })).status).toBe(400);
    expect((await call('POST', '/sms/sendSms', { body: 'hello', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await call('POST', '/sms/sendSms', { json: SMS, token: null })).status).toBe(401);
    expect((await call('POST', '/sms/sendSms', { json: { ...SMS, senderId: 'Other' }, token: 'limited' })).status).toBe(403);
    expect((await call('POST', '/sms/sendSms', { json: { ...SMS, senderId: 'Allowed' }, token: 'limited' })).status).toBe(429);
    expect((await call('PUT', '/sms/sendSms')).status).toBe(405);

    expect((await call('POST', '/sms/identify', { json: { message: 'hello €', destinationNumber: '447700900123' } })).status).toBe(200);
    expect((await call('POST', '/sms/identify', { json: { message: 'x', to: '1' } })).status).toBe(400);

    const form = bulkForm({ ...SMS, destinationNumber: undefined, campaignName: 'oas' }, '447700900001\n447700900002\n+447700900003\n');
    const bulk = await call('POST', '/sms/sendbulk', { body: form.payload, headers: form.headers });
    expect(bulk.status, bulk.text).toBe(200);
    const batchId = (JSON.parse(bulk.text) as { bulkSessionId: string }).bulkSessionId;
    expect((await call('POST', '/sms/sendbulk', { json: SMS })).status).toBe(415);
    const noFile = bulkForm(SMS, '');
    expect((await call('POST', '/sms/sendbulk', { body: noFile.payload.subarray(0, noFile.payload.indexOf('--', 10)), headers: noFile.headers })).status).toBe(400);

    expect((await call('GET', '/sms/list')).status).toBe(200);
    expect((await call('GET', `/sms/edit?batch_Id=${batchId}`)).status).toBe(200);
    expect((await call('GET', '/sms/edit?batch_Id=abc')).status).toBe(400);
    expect((await call('GET', '/sms/edit?batch_Id=999999')).status).toBe(404);
    expect((await call('GET', `/sms/pause?batch_Id=${batchId}`)).status).toBe(200);
    expect((await call('GET', `/sms/resume?batch_Id=${batchId}`)).status).toBe(200);
    expect((await call('GET', `/sms/resume?batch_Id=${batchId}`)).status).toBe(400);
    expect((await call('DELETE', `/sms/abort?batch_Id=${batchId}`)).status).toBe(200);
    const wrong = await call('GET', `/sms/abort?batch_Id=${batchId}`);
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'DELETE']);

    for (let i = 0; i < 2; i++) expect((await call('POST', '/sms/sendSms', { json: { ...SMS, isSchedule: true, time: later(), gmt: '+00:00' } })).status).toBe(200);
    const schedules = JSON.parse((await call('GET', '/sms/listSchedule')).text) as Array<{ id: number }>;
    expect(schedules).toHaveLength(2);
    expect((await call('POST', '/sms/send-now', { json: { scheduleId: schedules[0]!.id } })).status).toBe(200);
    expect((await call('POST', '/sms/send-now?scheduleId=999999')).status).toBe(404);
    expect((await call('DELETE', `/sms/abort/schedule?scheduleId=${schedules[1]!.id}`)).status).toBe(200);
    expect((await call('DELETE', '/sms/abort/schedule?scheduleId=x')).status).toBe(400);

    const messageId = sent.text;
    await until(async () => (JSON.parse((await call('GET', `/sms/status/${messageId}`, { template: '/sms/status/{messageId}' })).text) as { status: string }).status === 'DELIVERED',
      10_000, 'the message delivered');
    expect((await call('GET', '/sms/status/no-such-id', { template: '/sms/status/{messageId}' })).status).toBe(404);
    expect((await call('POST', '/sms/lookup?destinationNumber=447700900123')).status).toBe(501);

    expect((await call('POST', '/sms/resendDlr', { json: { startDate: today(), endDate: today() } })).status).toBe(200);
    expect((await call('POST', '/sms/resendDlr', { json: { startDate: today() } })).status).toBe(400);
    expect((await call('GET', '/events/dead?limit=10')).status).toBe(200);
    expect((await call('GET', '/events/dead?limit=0')).status).toBe(400);
    expect((await call('POST', '/events/dead/resend', { json: { all: true } })).status).toBe(200);

    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) expect((await call('GET', path, { token: null })).status).toBe(200);
    expect((await call('POST', '/healthz', { token: null })).status).toBe(405);

    // The admin API and its status page.
    expect((await call('GET', '/admin/status', { token: 'admin' })).status).toBe(200);
    expect((await call('GET', '/admin/status', { token: 'app' })).status).toBe(403);
    expect((await call('GET', '/admin/status', { token: null })).status).toBe(401);
    expect((await call('POST', '/admin/upstreams/sim/suspend', { token: 'admin', json: { reason: 'openapi test' }, template: '/admin/upstreams/{name}/suspend' })).status).toBe(200);
    expect((await call('POST', '/admin/upstreams/sim/resume', { token: 'admin', template: '/admin/upstreams/{name}/resume' })).status).toBe(200);
    expect((await call('POST', '/admin/upstreams/nope/resume', { token: 'admin', template: '/admin/upstreams/{name}/resume' })).status).toBe(404);
    expect((await call('GET', '/admin/messages?destination=447700900123', { token: 'admin' })).status).toBe(200);
    expect((await call('GET', '/admin/messages?limit=0', { token: 'admin' })).status).toBe(400);
    expect((await call('GET', `/admin/messages/${messageId}`, { token: 'admin', template: '/admin/messages/{id}' })).status).toBe(200);
    expect((await call('GET', '/admin/messages/no-such-id', { token: 'admin', template: '/admin/messages/{id}' })).status).toBe(404);
    expect((await call('GET', '/admin', { token: 'admin', headers: { accept: 'text/html' } })).status).toBe(200);
    expect((await call('GET', '/admin', { token: null, headers: { accept: 'application/json' } })).status).toBe(401);
    const login = await call('POST', '/admin/login', { token: null, body: `token=${TOKENS.admin}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect((await call('POST', '/admin/logout', { token: null, headers: { cookie } })).status).toBe(403);
    expect((await call('POST', '/admin/logout', { token: null, headers: { cookie, 'x-smppd-admin': '1' } })).status).toBe(303);

    const described = Object.values(doc.paths).flatMap((item) => METHODS.map((m) => (item[m] as { operationId?: string } | undefined)?.operationId))
      .filter((id): id is string => id !== undefined);
    // lookup has no success to record: it is always 501.
    expect([...called, 'lookup'].sort()).toEqual(described.sort());
  }, 30_000);

  it('the webhook requests: status events (a receipt among them) and an inbound event', async () => {
    await until(() => hook.accepted.some((r) => (r.json as { receipt?: unknown }).receipt != null), 10_000, 'a status event with its receipt');
    await until(() => sim.sendMo({ source: '447700900555', destination: '12345', shortMessage: Buffer.from('hello smppd', 'latin1'), dataCoding: 0 }) !== undefined,
      10_000, 'a receiving bind');
    await until(() => hook.accepted.some((r) => (r.json as { type?: string }).type === 'inbound'), 10_000, 'the inbound event');
    for (const r of hook.accepted) {
      const name = (r.json as { type: 'status' | 'inbound' }).type;
      expect(problems(`/webhooks/${name}/post/requestBody/content/application~1json/schema`, r.json), r.body).toEqual([]);
    }
  }, 30_000);
});
