/**
 * The daemon as `smppd start` builds it (store, pool, dispatcher, HTTP, the built-in simulator
 * from the config), driven only over HTTP: a send becomes DELIVERED; a bulk job paused before
 * its schedule is released sends nothing until resumed; send-now releases a schedule; a request
 * that arrives while the daemon stops is 503 SHUTTING_DOWN with the five-field body.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { parseConfig } from '../../src/config/load.js';
import { freePort } from '../support/free-port.js';
import { startDaemon, type RunningDaemon } from '../../src/cli/daemon.js';
import { bulkForm } from '../support/http.js';
import { RawConnection } from '../support/raw-http.js';
import { until } from '../support/engine.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';

/** The options each SmscSimulator was built with: what the daemon made of the simulator section. */
const simulatorOptions = vi.hoisted((): SimulatorOptions[] => []);
vi.mock('../../src/simulator/simulator.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/simulator/simulator.js')>();
  class RecordedSimulator extends real.SmscSimulator {
    constructor(...args: ConstructorParameters<typeof real.SmscSimulator>) {
      super(...args);
      simulatorOptions.push(args[0]);
    }
  }
  return { ...real, SmscSimulator: RecordedSimulator };
});

const TOKEN = 'daemon-test-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function daemon(): Promise<RunningDaemon & { call: (method: string, path: string, body?: object | { payload: Buffer; headers: Record<string, string> }) => Promise<Response> }> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-daemon-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const smscPort = await freePort();
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: app, token: ${TOKEN}, senders: [smppd] }]`,
    'store: { path: smppd.db }',
    `simulator: { enabled: true, port: ${smscPort}, systemId: demo, password: demopw, deliveryReceiptDelayMs: 10, receiptRouting: any }`,
    'upstreams:',
    `  - { name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: demo, password: demopw, binds: 2, ratePerBind: 0 }`,
    '',
  ].join('\n'), dir);
  const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog });
  cleanups.push(() => d.stop());
  const base = `http://127.0.0.1:${d.http.port}`;
  const call = (method: string, path: string, body?: object | { payload: Buffer; headers: Record<string, string> }) => {
    const multipart = body !== undefined && 'payload' in body;
    return fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(multipart ? (body as { headers: Record<string, string> }).headers : body ? { 'content-type': 'application/json' } : {}) },
      ...(body === undefined ? {} : { body: multipart ? (body as { payload: Buffer }).payload : JSON.stringify(body) }),
    });
  };
  return { ...d, call };
}


const statusOf = async (d: Awaited<ReturnType<typeof daemon>>, id: string) => ((await (await d.call('GET', `/sms/status/${id}`)).json()) as { status: string; parts: unknown[] });

describe('smppd start, over HTTP only', () => {
  it('a send becomes DELIVERED, part by part, with the simulator section\'s receipt delay and routing', async () => {
    const d = await daemon();
    expect(simulatorOptions.at(-1)?.behaviour).toMatchObject({ receiptRouting: 'any', receipts: { delayMs: 10 } });
    const res = await d.call('POST', '/sms/sendSms', { senderId: 'smppd', destinationNumber: '447700900123', message: 'z'.repeat(200), messageType: 'TEXT' });
    expect(res.status).toBe(200);
    const id = await res.text();
    await until(async () => (await statusOf(d, id)).status === 'DELIVERED', 10_000, 'DELIVERED');
    expect((await statusOf(d, id)).parts).toHaveLength(2);
  });

  it('a paused scheduled bulk job sends nothing until resumed; send-now releases a schedule', async () => {
    const d = await daemon();
    const later = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19);
    const res = await d.call('POST', '/sms/sendbulk', bulkForm({ senderId: 'smppd', message: 'bulk', messageType: 'TEXT', schedule: true, time: later }, '447700900001\n447700900002\n447700900003\n'));
    expect(res.status).toBe(200);
    const { bulkSessionId } = (await res.json()) as { bulkSessionId: string };
    const schedules = (await (await d.call('GET', '/sms/listSchedule')).json()) as Array<{ id: number }>;
    expect(schedules).toHaveLength(1);
    expect((await d.call('GET', `/sms/pause?batch_Id=${bulkSessionId}`)).status).toBe(200);
    expect((await d.call('POST', `/sms/send-now?scheduleId=${schedules[0]!.id}`)).status).toBe(200);
    const batch = async () => ((await (await d.call('GET', `/sms/edit?batch_Id=${bulkSessionId}`)).json()) as { pending: number; processed: number });
    await new Promise((r) => setTimeout(r, 300));
    expect((await batch()).processed).toBe(0);
    expect((await d.call('GET', `/sms/resume?batch_Id=${bulkSessionId}`)).status).toBe(200);
    await until(async () => (await batch()).pending === 0, 10_000, 'the batch sent');
  });

  it('while the daemon stops, a request on a connection still open is 503 SHUTTING_DOWN', async () => {
    const d = await daemon();
    const c = new RawConnection(d.http.port);
    cleanups.push(() => c.destroy());
    await c.connected;
    // Headers under way: the connection is busy, so the stop leaves it open.
    c.write(`POST /sms/sendSms HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TOKEN}\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    const stopped = d.stop();
    await until(async () => (await fetch(`http://127.0.0.1:${d.http.port}/healthz`).then(() => false, () => true)), 10_000, 'the listener to close');
    const send = JSON.stringify({ senderId: 'smppd', destinationNumber: '447700900123', message: 'late', messageType: 'TEXT' });
    c.write(`Content-Type: application/json\r\nContent-Length: ${send.length}\r\n\r\n${send}`);
    const res = await c.response();
    expect(res.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(JSON.parse(res.body)).toEqual({
      status: 503, error: 'Service Unavailable', message: 'smppd is stopping and takes no new request: retry on a new connection', errorCode: 'SHUTTING_DOWN', requestUri: '/sms/sendSms',
    });
    await c.closed;
    await stopped;
  });

  it('a reload of the clients (SIGHUP) brings a client\'s maxQueued in at the next request, and takes it away', async () => {
    const d = await daemon();
    // A scheduled job: its parts stay queued (held) until an hour from now.
    const later = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19);
    expect((await d.call('POST', '/sms/sendbulk', bulkForm({ senderId: 'smppd', message: 'bulk', messageType: 'TEXT', schedule: true, time: later }, '447700900001\n447700900002\n'))).status).toBe(200);
    const sendSms = () => d.call('POST', '/sms/sendSms', { senderId: 'smppd', destinationNumber: '447700900123', message: 'hi', messageType: 'TEXT' });
    d.reloadClients([{ name: 'app', token: TOKEN, senders: ['smppd'], maxQueued: 2, weight: 1 }]);
    const refused = await sendSms();
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { message: string }).message).toContain('client app has 2 parts queued; clients[].maxQueued is 2');
    d.reloadClients([{ name: 'app', token: TOKEN, senders: ['smppd'], weight: 1 }]);
    expect((await sendSms()).status).toBe(200);
  });
});
