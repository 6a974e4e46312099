/**
 * Two daemons sharing one PostgreSQL store, each with its own binds to one SMSC: sends
 * accepted by either are claimed by whichever instance is free, every message reaches
 * DELIVERED once (its receipt may come in on either instance), and the SMSC sees each message once.
 */
import { afterEach, expect, it } from 'vitest';
import type { RunningDaemon } from '../../../src/cli/daemon.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { Metrics } from '../../../src/observability/metrics.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { until } from '../../support/engine.js';
import { startPgDaemon } from './pg-daemon.js';
import { describePg, pgSchema } from './pg-store.js';

const TOKEN = 'pg-daemon-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('two daemons on one PostgreSQL store', () => {
  it('share the queue: every message is DELIVERED once and reaches the SMSC once, whichever instance took it', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pg', password: 'pgpw' }], record: true, behaviour: { receipts: { delayMs: 5 } } }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const metrics = { 'host-a': new Metrics(() => [], { processMetrics: false }), 'host-b': new Metrics(() => [], { processMetrics: false }) };
    const daemon = (instanceId: 'host-a' | 'host-b'): Promise<RunningDaemon> => startPgDaemon(cleanups, {
      schema: schema.name, instanceId, token: TOKEN, metrics: metrics[instanceId],
      upstream: `{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pg, password: pgpw, binds: 2 }`,
    });
    const [a, b] = [await daemon('host-a'), await daemon('host-b')];
    const call = (d: RunningDaemon, method: string, path: string, body?: object) => fetch(`http://127.0.0.1:${d.http.port}${path}`, {
      method, headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await call(i % 2 === 0 ? a : b, 'POST', '/sms/sendSms', { senderId: 'pg', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `m${i}`, messageType: 'TEXT' });
      expect(res.status).toBe(200);
      ids.push(await res.text());
    }
    const status = async (id: string) => ((await (await call(b, 'GET', `/sms/status/${id}`)).json()) as { status: string }).status;
    await until(async () => (await Promise.all(ids.map(status))).every((s) => s === 'DELIVERED'), 20_000, 'every message DELIVERED');
    const submits = sim.recordedSubmits();
    const destinations = submits.map((r) => r.destinationAddr);
    expect(destinations).toHaveLength(30);
    expect(new Set(destinations).size).toBe(30);
    // One send at a time into an empty queue: each went to the binds of the instance that
    // accepted it straight from its accept, without a claim (but those before its first claim).
    const dispatched = async (m: Metrics, via: string) =>
      (await m.registry.getSingleMetric('smppd_dispatched_total')!.get()).values.find((v) => v.labels['via'] === via)?.value ?? 0;
    const byWay = await Promise.all([metrics['host-a'], metrics['host-b']].map(async (m) => [await dispatched(m, 'accept'), await dispatched(m, 'claim')]));
    expect(byWay.reduce((sum, [accept, claim]) => sum + accept! + claim!, 0)).toBe(30);
    for (const [accept] of byWay) expect(accept).toBeGreaterThanOrEqual(10);
  }, 60_000);
});
