/**
 * An upstream's `accountRate` with two daemons on one PostgreSQL store: each instance takes an
 * equal share (the instances are counted by their instance locks), so together they stay within
 * it; when one stops, the other takes the whole within a few seconds.
 */
import { afterEach, expect, it } from 'vitest';
import type { RunningDaemon } from '../../../src/cli/daemon.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import type { Pool } from '../../../src/smpp/pool.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { until } from '../../support/engine.js';
import { startPgDaemon } from './pg-daemon.js';
import { describePg, pgSchema } from './pg-store.js';

const TOKEN = 'pg-account-token-0123456789';
const ACCOUNT_RATE = 400;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('accountRate across two instances on one PostgreSQL store', () => {
  it('each takes half, so together they stay within it; the one left takes all of it', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pg', password: 'pgpw' }], behaviour: { receipts: { enabled: false } } }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const daemon = async (instanceId: string): Promise<{ d: RunningDaemon; pool: () => Pool }> => {
      let pool: Pool | undefined;
      const d = await startPgDaemon(cleanups, {
        schema: schema.name, instanceId, token: TOKEN, onPool: (p) => { pool = p; },
        upstream: `{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pg, password: pgpw, binds: 2, ratePerBind: 1000, accountRate: ${ACCOUNT_RATE} }`,
      });
      return { d, pool: () => pool! };
    };
    const a = await daemon('host-a');
    const b = await daemon('host-b');
    const share = (x: { pool: () => Pool }): number | undefined => x.pool().accountStats()[0]?.share;
    await until(() => share(a) === ACCOUNT_RATE / 2 && share(b) === ACCOUNT_RATE / 2, 10_000, 'both instances at half the account');

    // Work for both, more than the account takes in two seconds.
    const send = (d: RunningDaemon, i: number): Promise<Response> => fetch(`http://127.0.0.1:${d.http.port}/sms/sendSms`, {
      method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ senderId: 'pg', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `m${i}`, messageType: 'TEXT' }),
    });
    const total = 1_600;
    for (let i = 0; i < total; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, (_, k) => send((i + k) % 2 === 0 ? a.d : b.d, i + k)));
      expect(batch.every((r) => r.status === 200)).toBe(true);
    }
    await until(() => sim.counters().totals.submitsReceived >= total, 20_000, 'every message at the SMSC');
    // Together at most the account's rate in any second (plus a little for the buckets' bursts and a late read).
    expect(sim.counters().totals.maxSubmitsPerSecond).toBeLessThanOrEqual(ACCOUNT_RATE * 1.1);
    expect(sim.counters().totals.maxSubmitsPerSecond).toBeGreaterThanOrEqual(ACCOUNT_RATE * 0.8);

    await b.d.stop();
    await until(() => share(a) === ACCOUNT_RATE, 10_000, 'the instance left takes the whole account');
  }, 60_000);
});
