/**
 * clients[].rateLimit end to end: the daemon as `smppd start` builds it, sending to a simulator
 * over real sockets. A client past its rate gets 429 RATE_LIMITED while another client's sends
 * go through and reach the SMSC; what reached the SMSC is only what was answered 200; /metrics
 * counts the refusals; a SIGHUP reload applies a new limit without a fresh burst.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDaemon } from '../../src/cli/daemon.js';
import { parseConfig } from '../../src/config/load.js';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Metrics } from '../../src/observability/metrics.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { until } from '../support/engine.js';
import { ERROR_FIELDS } from '../support/http.js';

const FLOOD = 'flood-token-0123456789abcdef';
const CALM = 'calm-token-0123456789abcdef';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp() {
  const clock = new SystemClock();
  const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'rl', password: 'rlpw' }], record: true }, clock, silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const dir = mkdtempSync(join(tmpdir(), 'smppd-rate-limit-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    'clients:',
    `  - { name: flood, token: ${FLOOD}, senders: [Flood], rateLimit: { perSecond: 2, burst: 3 } }`,
    `  - { name: calm, token: ${CALM}, senders: [Calm] }`,
    'store: { path: smppd.db }',
    `upstreams: [{ name: sim, host: 127.0.0.1, port: ${port}, systemId: rl, password: rlpw, binds: 1 }]`,
    '',
  ].join('\n'), dir);
  const metrics = new Metrics(() => [], { processMetrics: false });
  const d = await startDaemon(config, { clock, log: silentLog, metrics });
  cleanups.push(() => d.stop());
  const send = (token: string, senderId: string, n: number) => fetch(`http://127.0.0.1:${d.http.port}/sms/sendSms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ senderId, destinationNumber: `4477009${String(n).padStart(5, '0')}`, message: `m-${n}`, messageType: 'TEXT' }),
  });
  const submitsFrom = (source: string) => sim.recordedSubmits().filter((s) => s.sourceAddr === source).map((s) => s.destinationAddr);
  return { d, sim, metrics, config, send, submitsFrom };
}

describe('clients[].rateLimit, end to end through the simulator', () => {
  it('a client past its rate gets 429 while another client\'s sends go through and reach the SMSC', async () => {
    const { metrics, send, submitsFrom } = await setUp();
    const started = Date.now();
    // Interleaved: the flood's refusals come between the calm client's sends.
    const answers = { flood: [] as Response[], calm: [] as Response[] };
    for (let i = 0; i < 10; i++) {
      answers.flood.push(await send(FLOOD, 'Flood', i));
      answers.calm.push(await send(CALM, 'Calm', i));
    }
    const elapsedSeconds = (Date.now() - started) / 1000;

    expect(answers.calm.map((r) => r.status)).toEqual(Array(10).fill(200));
    const accepted = answers.flood.filter((r) => r.status === 200);
    const refused = answers.flood.filter((r) => r.status === 429);
    expect(accepted.length + refused.length).toBe(10);
    // The burst, and what the rate added while the loop ran; never more.
    expect(accepted.length).toBeGreaterThanOrEqual(3);
    expect(accepted.length).toBeLessThanOrEqual(3 + Math.floor(2 * elapsedSeconds));
    expect(answers.flood.slice(0, 3).map((r) => r.status)).toEqual([200, 200, 200]);
    for (const r of refused) {
      expect(r.headers.get('retry-after')).toBe('1');
      const body = await r.json() as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(ERROR_FIELDS);
      expect(body).toMatchObject({ status: 429, error: 'Too Many Requests', errorCode: 'RATE_LIMITED', requestUri: '/sms/sendSms' });
    }

    // What reached the SMSC: every calm send, and exactly the flood's accepted ones.
    const floodAccepted = answers.flood.map((r, i) => (r.status === 200 ? `4477009${String(i).padStart(5, '0')}` : null));
    await until(() => submitsFrom('Calm').length === 10 && submitsFrom('Flood').length === accepted.length, 10_000, 'the submits at the SMSC');
    expect(submitsFrom('Calm').sort()).toEqual(Array.from({ length: 10 }, (_, i) => `4477009${String(i).padStart(5, '0')}`));
    expect(submitsFrom('Flood').sort()).toEqual(floodAccepted.filter((n) => n !== null).sort());

    expect(await metrics.value('smppd_rate_limited_total', { client: 'flood', ingress: 'http' })).toBe(refused.length);
    expect(await metrics.value('smppd_rate_limited_total', { client: 'calm' })).toBe(0);
    expect(await metrics.value('smppd_http_requests_total', { route: '/sms/sendSms', status: '429' })).toBe(refused.length);
  });

  it('a reload (SIGHUP) applies the new limit at once, keeping the bucket: no fresh burst', async () => {
    const { d, config, send } = await setUp();
    const limit = (perSecond: number, burst: number) => d.reloadClients(config.clients.map((c) => (c.name === 'flood' ? { ...c, rateLimit: { perSecond, burst } } : c)));
    limit(0.1, 3); // one token per 10 s: the loop below cannot earn one
    let accepted = 0;
    while ((await send(FLOOD, 'Flood', accepted)).status === 200) accepted++;
    expect(accepted).toBe(3); // the burst saved before the reload, kept
    limit(0.5, 100);
    const refused = await send(FLOOD, 'Flood', 99);
    expect(refused.status).toBe(429); // not a fresh burst of 100
    // One token at 0.5 a second: about 2 s away, where the old rate said 10.
    expect(refused.headers.get('retry-after')).toBe('2');
    expect((await send(CALM, 'Calm', 0)).status).toBe(200);
  });
});
