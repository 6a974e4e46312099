/**
 * `kill -9` one instance of two that share a PostgreSQL store, mid-run. The other takes
 * over what the dead one had queued and in flight (once its lease has ended and its connection
 * is gone): every message answered 200 is DELIVERED, and duplicates at the SMSC stay within what
 * the killed instance had in flight.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { until } from '../../support/engine.js';
import { JsonLinesProcess } from '../../support/json-lines-process.js';
import { describePg, PG_URL, pgSchema } from './pg-store.js';

const TOKEN = 'pg-kill-token-0123456789';
const WINDOW = 20;
const BINDS = 2;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('kill -9 of one instance sharing PostgreSQL', () => {
  it('the other instance finishes its work: every message answered 200 is DELIVERED, duplicates within the window', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pgk', password: 'pgkpw' }], record: true,
      behaviour: { responseDelayMs: { min: 0, max: 20 }, receipts: { delayMs: 5 } },
    }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const dir = mkdtempSync(join(tmpdir(), 'smppd-pg-kill-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const lines = (instanceId: string, rate: number) => [
      'log: { level: info }',
      'http: { listen: "127.0.0.1:0" }',
      `clients: [{ name: app, token: ${TOKEN} }]`,
      `store: { kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: ${instanceId}, leaseSeconds: 2 }`,
      `upstreams: [{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pgk, password: pgkpw, binds: ${BINDS}, window: ${WINDOW}, ratePerBind: ${rate} }]`,
      '',
    ].join('\n');
    const configA = join(dir, 'a.yaml');
    writeFileSync(configA, lines('host-a', 10));
    const a = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', configA]);
    cleanups.push(() => a.kill());
    const portA = Number((await a.next('http_listening', 1, 60_000))[0]!.port);

    const answered: string[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`http://127.0.0.1:${portA}/sms/sendSms`, {
        method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ senderId: 'pgk', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `m${i}`, messageType: 'TEXT' }),
      });
      expect(res.status).toBe(200);
      answered.push(await res.text());
    }
    // A is sending (paced at 10/s per bind, slow enough that a loaded machine still posts all 200
    // before A has sent them): some sent, some in flight, most queued.
    await until(() => sim.recordedSubmits().length >= 40, 20_000, 'A sending');
    a.child.kill('SIGKILL');
    await a.exited();
    const sentByA = sim.recordedSubmits().length;

    // B starts after A's lease has ended; its first recovery takes A's parts over.
    await new Promise((r) => setTimeout(r, 2_500));
    const b = await startDaemon(await parseConfig(lines('host-b', 0), dir), { clock: new SystemClock(), log: silentLog });
    cleanups.push(() => b.stop());
    const status = async (id: string) => ((await (await fetch(`http://127.0.0.1:${b.http.port}/sms/status/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { status: string }).status;
    await until(async () => (await Promise.all(answered.map(status))).every((s) => s === 'DELIVERED'), 30_000, 'every answered message DELIVERED');

    const destinations = sim.recordedSubmits().map((r) => r.destinationAddr);
    expect(new Set(destinations).size).toBe(200);
    const duplicates = destinations.length - 200;
    expect(sentByA).toBeLessThan(200);
    expect(duplicates).toBeLessThanOrEqual(BINDS * WINDOW);
  }, 120_000);
});
