/**
 * `kill -9` of one of two running instances sharing PostgreSQL, under load, with a short lease:
 * the survivor sends the parts the dead one had in flight and delivers the events it had claimed
 * within `store.leaseSeconds` plus 5 s, not on a fixed sweep or the delivery's own lease (a
 * minute). Counted at the simulator (every accepted message sent) and at the webhook receiver
 * (every message's DELIVERED event).
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
import { startWebhookReceiver } from '../../support/webhook-receiver.js';
import { describePg, PG_URL, pgSchema } from './pg-store.js';

const TOKEN = 'pg-lease-token-0123456789';
const LEASE_SECONDS = 3;
/** The bound: the lease and a few seconds. */
const BOUND_MS = (LEASE_SECONDS + 5) * 1000;
const BEFORE_KILL = 200;
const AFTER_KILL = 50;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('kill -9 of one of two running instances sharing PostgreSQL', () => {
  it('the survivor sends the dead one\'s parts and delivers its events within the lease and 5 s', async ({ annotate }) => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pgl', password: 'pglpw' }], record: true,
      behaviour: { responseDelayMs: { min: 0, max: 10 }, receipts: { delayMs: 5 } },
    }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const hook = await startWebhookReceiver();
    cleanups.push(() => hook.close());
    // Until the kill, slow answers: the instances claim events ahead of their requests, so the
    // one killed holds some it never sent.
    let slow = true;
    hook.setBehaviour(async () => {
      if (slow) await new Promise((r) => setTimeout(r, 1_000));
      return { status: 200 };
    });
    const dir = mkdtempSync(join(tmpdir(), 'smppd-pg-lease-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = (instanceId: string, rate: number) => [
      'log: { level: info }',
      'http: { listen: "127.0.0.1:0" }',
      `clients: [{ name: app, token: ${TOKEN}, webhook: { url: "${hook.url}", allowHttp: true, concurrency: 4 } }]`,
      `store: { kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: ${instanceId}, leaseSeconds: ${LEASE_SECONDS} }`,
      `upstreams: [{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pgl, password: pglpw, binds: 2, window: 10, ratePerBind: ${rate} }]`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'a.yaml'), config('host-a', 10));
    // A is paced slowly (its pool holds what it claimed while it trickles out), B not at all.
    const a = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', join(dir, 'a.yaml')]);
    cleanups.push(() => a.kill());
    const [b, portA] = await Promise.all([
      startDaemon(await parseConfig(config('host-b', 0), dir), { clock: new SystemClock(), log: silentLog }),
      a.next('http_listening', 1, 60_000).then((e) => Number(e[0]!.port)),
    ]);
    cleanups.push(() => b.stop());

    const send = async (httpPort: number, i: number): Promise<string> => {
      const res = await fetch(`http://127.0.0.1:${httpPort}/sms/sendSms`, {
        method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ senderId: 'pgl', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `m${i}`, messageType: 'TEXT' }),
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const sendAll = async (httpPort: number, from: number, n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = from; i < from + n; i += 10) ids.push(...await Promise.all(Array.from({ length: Math.min(10, from + n - i) }, (_, k) => send(httpPort, i + k))));
      return ids;
    };
    const answered = await sendAll(portA, 0, BEFORE_KILL);
    await until(() => sim.recordedSubmits().length >= 40, 30_000, 'the instances sending');
    const held = async () => (await schema.sql<{ parts: number; events: number }>(`SELECT
      (SELECT count(*)::int FROM parts WHERE state = 'inflight' AND claimed_by = 'host-a') AS parts,
      (SELECT count(*)::int FROM outbox WHERE leased_by = 'host-a') AS events`))[0]!;
    await until(async () => { const h = await held(); return h.parts > 0 && h.events > 0; }, 30_000, 'A holding parts and events');

    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    slow = false;
    await a.exited();
    const atKill = await held();
    // Load on the survivor meanwhile.
    answered.push(...await sendAll(b.http.port, BEFORE_KILL, AFTER_KILL));

    let takenOverMs: number | undefined;
    const delivered = () => new Set(hook.accepted.map((r) => r.json as { messageId?: string; status?: string })
      .filter((e) => e.status === 'DELIVERED').map((e) => e.messageId));
    const done = async () => {
      await new Promise((r) => setTimeout(r, 50));
      if (takenOverMs === undefined) {
        const h = await held();
        if (h.parts === 0 && h.events === 0) takenOverMs = Date.now() - killedAt;
      }
      const sent = new Set(sim.recordedSubmits().map((r) => r.destinationAddr));
      const events = delivered();
      return sent.size === BEFORE_KILL + AFTER_KILL && answered.every((id) => events.has(id));
    };
    await until(done, BOUND_MS + 30_000, 'every accepted message sent and its DELIVERED event delivered');
    const doneMs = Date.now() - killedAt;
    await annotate(`A held ${atKill.parts} parts and ${atKill.events} events at the kill; taken over after ${takenOverMs ?? '?'} ms; all sent and delivered after ${doneMs} ms (lease ${LEASE_SECONDS} s)`);

    expect(atKill.parts).toBeGreaterThan(0);
    expect(atKill.events).toBeGreaterThan(0);
    expect(doneMs).toBeLessThanOrEqual(BOUND_MS);
  }, 180_000);
});
