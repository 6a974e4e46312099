/**
 * The daemon's health as an operator's probes see it: /readyz follows the binds (503 with the
 * reason while no bind of an upstream is bound, 200 again once one is), goes 503 as soon as a
 * stop begins, and /metrics on the HTTP port carries the queue, outbox, bind and HTTP series;
 * on its own port (metrics.listen) it has the API listener's defences.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../src/cli/daemon.js';
import { parseConfig } from '../../src/config/load.js';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Metrics } from '../../src/observability/metrics.js';
import type { Pool } from '../../src/smpp/pool.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { until } from '../support/engine.js';
import { RawConnection, exchange } from '../support/raw-http.js';

const TOKEN = 'health-test-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A daemon config in a fresh folder (removed after the test): these lines, then the common ones. */
async function configWith(lines: string[], smscPort: number, upstreamExtra = '') {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-health-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    ...lines,
    `clients: [{ name: app, token: ${TOKEN} }]`,
    'store: { path: smppd.db }',
    `upstreams: [{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: health, password: healthpw${upstreamExtra} }]`,
    '',
  ].join('\n'), dir);
}

async function simulatorOn(port: number): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({ host: '127.0.0.1', port, accounts: [{ systemId: 'health', password: 'healthpw' }], behaviour: { receipts: { delayMs: 5 } } }, new SystemClock(), silentLog);
  return { sim, port: (await sim.start()).port };
}

describe('health of a running daemon', () => {
  it('/readyz follows the binds, and goes 503 at once when a stop begins; /metrics carries the daemon\'s series', async () => {
    let { sim, port: smscPort } = await simulatorOn(0);
    cleanups.push(() => sim.stop());
    const config = await configWith([], smscPort, ', binds: 2, reconnect: { initialSeconds: 0.05, maxSeconds: 0.2 }');
    let pool: Pool | undefined;
    const running: { daemon?: RunningDaemon } = {};
    const metrics = new Metrics(() => pool?.stats() ?? [], {
      processMetrics: false,
      readOutbox: async () => (await running.daemon?.outboxDepth()) ?? [],
      readQueue: async () => (await running.daemon?.queue()) ?? { queued: 0, inflight: 0, parked: 0 },
    });
    const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog, metrics, onPool: (p) => { pool = p; } });
    running.daemon = d;
    let stopped = false;
    cleanups.push(async () => { if (!stopped) await d.stop(); });
    const base = `http://127.0.0.1:${d.http.port}`;
    const readyz = async () => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, body: await res.json() as { status: string; reasons?: string[] } };
    };

    await until(async () => (await readyz()).status === 200, 10_000, 'ready once the binds are up');

    await sim.stop();
    await until(async () => (await readyz()).status === 503, 10_000, 'not ready without binds');
    expect((await readyz()).body).toEqual({
      status: 'not ready', reasons: ['route default: no upstream available (sim 0 of 2 binds bound)'], upstreams: [{ name: 'sim', available: false, bound: 0, binds: 2 }],
    });

    ({ sim, port: smscPort } = await simulatorOn(smscPort));
    await until(async () => (await readyz()).status === 200, 10_000, 'ready again after the SMSC came back');

    const sent = await fetch(`${base}/sms/sendSms`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ senderId: 'health', destinationNumber: '447700900123', message: 'hi', messageType: 'TEXT' }),
    });
    expect(sent.status).toBe(200);
    const text = await (await fetch(`${base}/metrics`)).text();
    // At least one of the two binds is bound (readiness asked no more).
    expect(text).toMatch(/smppd_bind_state\{upstream="sim",bind="sim#[01]",state="bound"\} 1/);
    for (const series of [
      'smppd_dispatch_lag_seconds{upstream="sim"}',
      'smppd_bind_submits_total{upstream="sim",bind="sim#',
      'smppd_queue_parts{state="queued"}',
      'smppd_parked_receipts',
      'smppd_http_requests_total{route="/sms/sendSms",method="POST",status="200"} 1',
      'smppd_http_requests_total{route="/readyz",method="GET",status="503"}',
    ]) expect(text, series).toContain(series);

    const stopping = d.stop();
    stopped = true;
    expect(d.health.readiness()).toMatchObject({ ready: false, reasons: ['stopping'] });
    await stopping;
  }, 60_000);

  it('metrics.listen moves /metrics to its own port', async () => {
    const { sim, port: smscPort } = await simulatorOn(0);
    cleanups.push(() => sim.stop());
    const config = await configWith(['metrics: { listen: "127.0.0.1:0" }'], smscPort);
    expect(config.metrics).toEqual({ listen: { host: '127.0.0.1', port: 0 } });
    const metrics = new Metrics(() => [], { processMetrics: false });
    const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog, metrics });
    cleanups.push(() => d.stop());
    expect(d.metricsHttp?.port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${d.metricsHttp!.port}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('smppd_webhook_attempts_total');
    expect((await fetch(`http://127.0.0.1:${d.http.port}/metrics`)).status).toBe(404);
  }, 30_000);

  it('the metrics listener holds at most 16 connections and refuses in the five-field body, as the API listener does', async () => {
    const { sim, port: smscPort } = await simulatorOn(0);
    cleanups.push(() => sim.stop());
    const config = await configWith(['metrics: { listen: "127.0.0.1:0" }'], smscPort);
    const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog, metrics: new Metrics(() => [], { processMetrics: false }) });
    cleanups.push(() => d.stop());
    const port = d.metricsHttp!.port;
    const connections: RawConnection[] = [];
    cleanups.push(() => connections.forEach((c) => c.destroy()));
    const connect = async (): Promise<RawConnection> => {
      const c = new RawConnection(port);
      connections.push(c);
      await c.connected;
      return c;
    };

    // 16 keep-alive connections, each served once and now idle.
    const held = await Promise.all(Array.from({ length: 16 }, connect));
    held.forEach((c) => c.write('GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n'));
    await until(() => held.every((c) => c.received.includes('HTTP/1.1 200 OK')), 10_000, 'the held connections\' answers');
    // One more is closed without a byte: a flood cannot take the daemon's descriptors through this port.
    const extra = await connect();
    extra.write('GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => extra.isClosed, 10_000, 'the 17th connection to be closed');
    expect(extra.received).toBe('');

    // A slot freed is taken again (once the server has seen the close).
    held[0]!.destroy();
    let other: Awaited<ReturnType<typeof exchange>> | undefined;
    await until(async () => {
      other = await exchange(port, 'GET /nothing HTTP/1.1\r\nHost: a\r\n\r\n').catch(() => undefined);
      return other !== undefined;
    }, 10_000, 'a freed slot');
    connections.push(other!.connection);
    expect(JSON.parse(other!.body)).toEqual({ status: 404, error: 'Not Found', message: 'no route GET /nothing', errorCode: 'NOT_FOUND', requestUri: '/nothing' });
  }, 30_000);
});
