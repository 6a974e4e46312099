/**
 * The MCP server at /mcp, driven by the SDK's own client over a real socket to the daemon as
 * `smppd start` builds it (store, pool, dispatcher, the built-in simulator): the tools it lists,
 * each tool's answer beside the HTTP API's for the same request, the HTTP API's refusals (the
 * five fields, the same errorCode), its token, its rate limit and its idempotency keys.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import type { RecordedSubmit } from '../../../src/simulator/options.js';
import { until } from '../../support/engine.js';
import { freePort } from '../../support/free-port.js';
import { ERROR_FIELDS, bearer, httpHarness, type Harness } from '../../support/http.js';

/** Each simulator the daemon builds, recording every submit_sm it receives. */
const simulators = vi.hoisted((): Array<{ recordedSubmits(): RecordedSubmit[] }> => []);
vi.mock('../../../src/simulator/simulator.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/simulator/simulator.js')>();
  class RecordingSimulator extends real.SmscSimulator {
    constructor(...[options, clock, log]: ConstructorParameters<typeof real.SmscSimulator>) {
      super({ ...options, record: true }, clock, log);
      simulators.push(this);
    }
  }
  return { ...real, SmscSimulator: RecordingSimulator };
});

const TOKENS = { app: 'mcp-app-token-0123456789', other: 'mcp-other-token-0123456789', slow: 'mcp-slow-token-0123456789' } as const;
const SEND = { senderId: 'smppd', destinationNumber: '447700900123', message: 'Hello from an agent', messageType: 'TEXT' };

let dir: string;
let d: RunningDaemon;
let base: string;
const open: Client[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smppd-mcp-'));
  const smscPort = await freePort();
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    'mcp: { enabled: true }',
    'clients:',
    `  - { name: app, token: ${TOKENS.app}, senders: [smppd] }`,
    `  - { name: other, token: ${TOKENS.other} }`,
    `  - { name: slow, token: ${TOKENS.slow}, rateLimit: { perSecond: 0.001, burst: 1 } }`,
    // The store on the main thread: a worker would load the sources again, for seconds, and is not what this tests.
    'store: { path: smppd.db, thread: main }',
    `simulator: { enabled: true, port: ${smscPort}, systemId: demo, password: demopw, deliveryReceiptDelayMs: 10, receiptRouting: any }`,
    'upstreams:',
    `  - { name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: demo, password: demopw, binds: 1, ratePerBind: 0 }`,
    '',
  ].join('\n'), dir);
  d = await startDaemon(config, { clock: new SystemClock(), log: silentLog });
  base = `http://127.0.0.1:${d.http.port}`;
});

afterAll(async () => {
  for (const c of open) await c.close();
  await d?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function transport(token: string): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
}

async function connect(token: string = TOKENS.app): Promise<Client> {
  const client = new Client({ name: 'smppd-test-agent', version: '1.0.0' });
  await client.connect(transport(token));
  open.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The same request over the HTTP API. */
function http(method: string, path: string, body?: object, headers: Record<string, string> = {}, token: string = TOKENS.app): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

const textOf = (result: CallToolResult): string => {
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error('no text content');
  return first.text;
};

/** A refusal: the five fields in order, the text the same as JSON. */
function expectRefusal(result: CallToolResult, status: number, errorCode: string): Record<string, unknown> {
  expect(result.isError, textOf(result)).toBe(true);
  const body = result.structuredContent as Record<string, unknown>;
  expect(Object.keys(body).slice(0, 5)).toEqual(ERROR_FIELDS);
  expect(body).toMatchObject({ status, errorCode, requestUri: '/mcp' });
  expect(JSON.parse(textOf(result))).toEqual(body);
  return body;
}

describe('MCP over Streamable HTTP', () => {
  it('lists the four tools, each with the JSON Schema of the API\'s own zod schema', async () => {
    const client = await connect();
    expect(client.getServerVersion()?.name).toBe('smppd');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['send_sms', 'identify_sms', 'get_message_status', 'list_batches']);
    const send = tools.find((t) => t.name === 'send_sms')!;
    expect(send.inputSchema).toMatchObject({ type: 'object', additionalProperties: false, required: ['senderId', 'destinationNumber', 'message', 'messageType'] });
    expect(Object.keys(send.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['isSchedule', 'time', 'gmt', 'expiryHour', 'campaignName', 'idempotencyKey']));
    expect(send.annotations).toMatchObject({ readOnlyHint: false });
    expect(tools.find((t) => t.name === 'get_message_status')!.inputSchema).toMatchObject({ required: ['messageId'], additionalProperties: false });
  });

  it('send_sms reaches the simulator; get_message_status answers what GET /sms/status answers, up to DELIVERED', async () => {
    const client = await connect();
    const sent = await call(client, 'send_sms', SEND);
    expect(sent.isError).toBeFalsy();
    const messageId = textOf(sent);
    expect(sent.structuredContent).toEqual({ messageId });
    await until(() => simulators.at(-1)!.recordedSubmits().some((s) => s.destinationAddr === SEND.destinationNumber && s.shortMessage.toString('latin1') === SEND.message), 5_000, 'the submit_sm');
    const status = async () => (await call(client, 'get_message_status', { messageId })).structuredContent as { status: string };
    await until(async () => (await status()).status === 'DELIVERED', 10_000, 'DELIVERED');
    const result = await call(client, 'get_message_status', { messageId });
    const over = await (await http('GET', `/sms/status/${messageId}`)).json();
    expect(result.structuredContent).toEqual(over);
    expect(JSON.parse(textOf(result))).toEqual(over);
    // Another client's message is not found, as over HTTP.
    const foreign = await call(await connect(TOKENS.other), 'get_message_status', { messageId });
    expectRefusal(foreign, 404, 'MESSAGE_NOT_FOUND');
    expect((await http('GET', `/sms/status/${messageId}`, undefined, {}, TOKENS.other)).status).toBe(404);
  });

  it('identify_sms answers what POST /sms/identify answers', async () => {
    const body = { message: 'Grüße — €5', destinationNumber: '447700900123' };
    const result = await call(await connect(), 'identify_sms', body);
    const over = await (await http('POST', '/sms/identify', body)).json();
    expect(result.structuredContent).toEqual(over);
    expect(over).toMatchObject({ messageType: 'UNICODE', smscount: 1 });
  });

  it('list_batches answers what GET /sms/list answers, only the client\'s own', async () => {
    const client = await connect();
    const scheduled = await call(client, 'send_sms', { ...SEND, isSchedule: true, time: '2099-12-31 10:00:00', gmt: '+00:00', campaignName: 'agent' });
    expect(scheduled.isError, textOf(scheduled)).toBeFalsy();
    const result = await call(client, 'list_batches', {});
    const over = await (await http('GET', '/sms/list')).json();
    expect(result.structuredContent).toEqual({ batches: over });
    expect(JSON.parse(textOf(result))).toEqual(over);
    expect(over).toContainEqual(expect.objectContaining({ reqType: 'single', campaignName: 'agent', total: 1 }));
    expect((await call(await connect(TOKENS.other), 'list_batches', {})).structuredContent).toEqual({ batches: [] });
  });

  it('refuses a bad number with the five fields and the errorCode HTTP gives, sending nothing', async () => {
    const bad = { ...SEND, destinationNumber: '+44 7700 900123' };
    const before = simulators.at(-1)!.recordedSubmits().length;
    const result = await call(await connect(), 'send_sms', bad);
    const over = await http('POST', '/sms/sendSms', bad);
    const overBody = await over.json() as Record<string, unknown>;
    const body = expectRefusal(result, over.status, overBody.errorCode as string);
    expect(body).toMatchObject({ status: 400, error: 'Bad Request', errorCode: 'VALIDATION', message: overBody.message });
    expect(body.message).toContain('destinationNumber:');
    // An unknown field and a sender this client may not use, as over HTTP.
    expectRefusal(await call(await connect(), 'send_sms', { ...SEND, to: '447700900123' }), 400, 'VALIDATION');
    expectRefusal(await call(await connect(), 'send_sms', { ...SEND, senderId: 'Other' }), 403, 'SENDER_NOT_ALLOWED');
    expectRefusal(await call(await connect(), 'list_batches', { all: true }), 400, 'VALIDATION');
    // No such tool: a JSON-RPC error, as the protocol has it.
    await expect(call(await connect(), 'delete_everything', {})).rejects.toThrow(/no tool "delete_everything"/);
    expect(simulators.at(-1)!.recordedSubmits()).toHaveLength(before);
  });

  it('takes send_sms from the client\'s rate limit, as HTTP sends', async () => {
    const client = await connect(TOKENS.slow);
    expect((await call(client, 'send_sms', SEND)).isError).toBeFalsy();
    const limited = expectRefusal(await call(client, 'send_sms', SEND), 429, 'RATE_LIMITED');
    expect(limited.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // The bucket is the HTTP API's too.
    expect((await http('POST', '/sms/sendSms', SEND, {}, TOKENS.slow)).status).toBe(429);
  });

  it('answers a repeated idempotencyKey with the first message id, over MCP and HTTP alike', async () => {
    const client = await connect();
    const key = 'agent-retry-0001';
    const first = textOf(await call(client, 'send_sms', { ...SEND, idempotencyKey: key }));
    expect(textOf(await call(client, 'send_sms', { ...SEND, idempotencyKey: key }))).toBe(first);
    expect(await (await http('POST', '/sms/sendSms', SEND, { 'idempotency-key': key })).text()).toBe(first);
    expectRefusal(await call(client, 'send_sms', { ...SEND, message: 'other', idempotencyKey: key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectRefusal(await call(client, 'send_sms', { ...SEND, idempotencyKey: '' }), 400, 'VALIDATION');
  });

  it('refuses a missing or unknown token with 401, the five fields and WWW-Authenticate, before any tool', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token-of-anyone' }] as Array<Record<string, string>>) {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST', headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      const body = await res.json() as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(ERROR_FIELDS);
      expect(body).toMatchObject({ status: 401, error: 'Unauthorized', errorCode: 'UNAUTHORIZED', requestUri: '/mcp' });
    }
    const client = new Client({ name: 'smppd-test-agent', version: '1.0.0' });
    const refused = await client.connect(transport('not-a-token-of-anyone')).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(401);
  });

  it('answers GET and DELETE with 405 and Allow: POST (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await http(method, '/mcp', undefined, { accept: 'text/event-stream' });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});

describe('MCP in process', () => {
  const rpc = (h: Harness, body: object, headers: Record<string, string> = bearer()) => h.app.inject({
    method: 'POST', url: '/mcp', headers: { ...headers, accept: 'application/json, text/event-stream' }, payload: body,
  });
  const statusCall = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'get_message_status', arguments: { messageId: 'm-1' } } };

  it('is 404 at /mcp when mcp.enabled is not set', async () => {
    const h = await httpHarness();
    try {
      const res = await rpc(h, statusCall);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ errorCode: 'NOT_FOUND', requestUri: '/mcp' });
    } finally {
      await h.close();
    }
  });

  it('answers a store failure as INTERNAL, logged without the token or the failure in the answer', async () => {
    const h = await httpHarness({ mcp: true });
    try {
      h.store.getMessage = async () => { throw new Error('disk on fire'); };
      const res = await rpc(h, statusCall);
      expect(res.statusCode).toBe(200);
      const { result } = res.json() as { result: CallToolResult };
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ status: 500, errorCode: 'INTERNAL', requestUri: '/mcp' });
      expect(JSON.stringify(result)).not.toContain('disk on fire');
      expect(h.logs.some((l) => l.includes('mcp_internal_error') && l.includes('disk on fire'))).toBe(true);
      // h.close() fails the test if any token reached the log.
    } finally {
      await h.close();
    }
  });
});
