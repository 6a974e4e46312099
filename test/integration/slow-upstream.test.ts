/**
 * A slow upstream (ratePerBind well under its window) as `smppd start` wires it: the dispatcher
 * hands its pool no more than the pool's queue takes, so a backlog waits in the store and no
 * message is refused by the pool and requeued.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { parseConfig } from '../../src/config/load.js';
import { freePort } from '../support/free-port.js';
import { startDaemon } from '../../src/cli/daemon.js';
import { bulkForm, recordingLog } from '../support/http.js';
import { until } from '../support/engine.js';

const TOKEN = 'slow-upstream-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('a slow upstream', () => {
  it('at 10 submit_sm/s with a window of 100, a backlog of 300 waits in the store: the pool refuses none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smppd-slow-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const smscPort = await freePort();
    const config = await parseConfig([
      'http: { listen: "127.0.0.1:0" }',
      `clients: [{ name: app, token: ${TOKEN} }]`,
      'store: { path: smppd.db }',
      `simulator: { enabled: true, port: ${smscPort}, systemId: slow, password: slowpw, deliveryReceiptDelayMs: 10 }`,
      'upstreams:',
      `  - { name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: slow, password: slowpw, binds: 1, window: 100, ratePerBind: 10, burst: 1 }`,
      '',
    ].join('\n'), dir);
    const lines: string[] = [];
    const d = await startDaemon(config, { clock: new SystemClock(), log: recordingLog(lines) });
    cleanups.push(() => d.stop());
    await until(() => d.pool.stats().some((b) => b.state === 'bound'), 10_000, 'the bind up');

    const numbers = Array.from({ length: 300 }, (_, i) => String(447_700_900_000 + i)).join('\n');
    const { payload, headers } = bulkForm({ senderId: 'Slow', message: 'slowly', messageType: 'TEXT' }, numbers);
    const res = await fetch(`http://127.0.0.1:${d.http.port}/sms/sendbulk`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, ...headers }, body: payload });
    expect(res.status).toBe(200);

    // The dispatcher fills the pool at once and again as it drains: three seconds are several fills.
    await until(async () => (await d.queue()).inflight > 0, 10_000, 'parts handed to the pool');
    await new Promise((r) => setTimeout(r, 3_000));
    expect(lines.filter((l) => l.includes('"submit_refused"')), 'messages the pool refused').toEqual([]);
    const { queued, inflight } = await d.queue();
    expect(queued + inflight).toBeGreaterThan(200);
    expect(inflight).toBeLessThanOrEqual(100);
  }, 60_000);
});
