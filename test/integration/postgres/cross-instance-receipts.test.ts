/**
 * Scale-out: two daemon processes share one PostgreSQL schema and one RabbitMQ queue,
 * each with two binds to the simulator, and the simulator sends every receipt on a bind of the
 * other instance (receiptRouting 'other-system-type'; each instance binds with its own
 * system_type). Every message ends DELIVERED once: the receipt finds its part wherever it
 * arrives, before or after the submitting instance has recorded the submit_sm_resp.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import type { BindSnapshot } from '../../../src/simulator/counters.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { JsonLinesProcess } from '../../support/json-lines-process.js';
import { AMQP_URL, BrokerView, noteSkipped, uniqueName, until } from '../amqp/broker.js';
import { describePg, PG_URL, pgSchema } from './pg-store.js';

noteSkipped('cross-instance receipts (test/integration/postgres/cross-instance-receipts.test.ts)');

const QUEUED = 300;
const HTTP_PER_INSTANCE = 25;
const WEB_TOKEN = 'xi-web-token-0123456789';
const INSTANCES = [
  { name: 'a', systemType: 'smppd-a', client: 'queue-a' },
  { name: 'b', systemType: 'smppd-b', client: 'queue-b' },
] as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** SIGTERM (a clean unbind and broker close), SIGKILL if it has not exited in time. */
async function stopDaemon(p: JsonLinesProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  const exited = await Promise.race([p.exited().then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 20_000))]);
  if (!exited) p.kill();
  await p.exited();
}

/** The number of consumers on `queue`, or -1 before it is declared. A failed check closes its channel: a channel each. */
async function consumers(view: BrokerView, queue: string): Promise<number> {
  const ch = await view.connection.createChannel();
  ch.on('error', () => {});
  const n = await ch.checkQueue(queue).then((q) => q.consumerCount, () => -1);
  await ch.close().catch(() => {});
  return n;
}

/** smppd_receipts_total of one daemon, by result. */
async function receiptsSeen(port: number): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^smppd_receipts_total\{[^}]*result="([a-z_]+)"[^}]*\} (\d+)$/gm)) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  return out;
}

const sum = (binds: BindSnapshot[], pick: (b: BindSnapshot) => number): number => binds.reduce((n, b) => n + pick(b), 0);

describePg('two instances sharing PostgreSQL and RabbitMQ, receipts on the other instance\'s binds', () => {
  it.skipIf(!AMQP_URL)('every message is DELIVERED once; every receipt went to the other instance; both consumed and both matched receipts', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const view = await BrokerView.open();
    cleanups.push(() => view.close());
    const queue = view.ownQueue(uniqueName('xi-sends'));
    view.ownQueue(`${queue}.dead`);
    view.ownExchange(`${queue}.dead`);
    for (const inst of INSTANCES) view.ownQueue(`${queue}.wait.${inst.client}`);

    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'xinst', password: 'xinstpw' }], record: true,
      // Receipts within 0–20 ms of the response: often before the submitting instance has stored its
      // outcome, so the other instance parks them and the submitting one applies them.
      behaviour: { receiptRouting: 'other-system-type', responseDelayMs: { min: 0, max: 5 }, receipts: { delayMs: { min: 0, max: 20 } } },
    }, new SystemClock(), silentLog);
    const { port: smscPort } = await sim.start();
    cleanups.push(() => sim.stop());

    const dir = mkdtempSync(join(tmpdir(), 'smppd-pg-xi-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const daemons = INSTANCES.map((inst) => {
      const config = join(dir, `${inst.name}.yaml`);
      writeFileSync(config, [
        'log: { level: info }',
        'http: { listen: "127.0.0.1:0" }',
        // The same clients on both; each instance stores what it consumes as its own client, so the store says who consumed what.
        `clients: [{ name: ${INSTANCES[0].client}, token: xi-queue-token-a-0123456789 }, { name: ${INSTANCES[1].client}, token: xi-queue-token-b-0123456789 }, { name: web, token: ${WEB_TOKEN} }]`,
        `store: { kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: xi-${inst.name} }`,
        `amqp: { url: "${AMQP_URL}", queue: ${queue}, client: ${inst.client} }`,
        `upstreams: [{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: xinst, password: xinstpw, systemType: ${inst.systemType}, binds: 2 }]`,
        '',
      ].join('\n'));
      const p = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', config]);
      cleanups.push(() => stopDaemon(p));
      return p;
    });
    const httpPorts = await Promise.all(daemons.map(async (p) => Number((await p.next('http_listening', 1, 90_000))[0]!.port)));

    // Every bind of both instances up at the SMSC and both consuming, before any traffic: a receipt
    // for a message of A must find a bind of B, and the broker must share the queue between them.
    const bindsOf = (systemType: string) => sim.counters().binds.filter((b) => !b.closed && b.systemType === systemType);
    await until(() => INSTANCES.every((i) => bindsOf(i.systemType).length === 2), 60_000, 'two binds of each instance at the SMSC');
    await until(async () => (await consumers(view, queue)) === 2, 60_000, 'both instances consuming the queue');

    for (let i = 0; i < QUEUED; i++) {
      view.publishJson(queue, { senderId: 'XInst', destinationNumber: `4477009${String(i).padStart(5, '0')}`, message: `queued ${i}`, messageType: 'TEXT', reference: `q${i}` });
    }
    let n = QUEUED;
    for (const port of httpPorts) {
      for (let i = 0; i < HTTP_PER_INSTANCE; i++, n++) {
        const res = await fetch(`http://127.0.0.1:${port}/sms/sendSms`, {
          method: 'POST', headers: { authorization: `Bearer ${WEB_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ senderId: 'XInst', destinationNumber: `4477009${String(n).padStart(5, '0')}`, message: `http ${n}`, messageType: 'TEXT' }),
        });
        expect(res.status).toBe(200);
      }
    }
    const total = n;

    type Row = { destination: string; client: string; status: string };
    const messages = () => schema.sql<Row>('SELECT destination, client, status FROM messages');
    await until(async () => {
      const rows = await messages();
      return rows.length >= total && rows.every((r) => r.status === 'DELIVERED');
    }, 120_000, `${total} messages DELIVERED`).catch(async (e: unknown) => {
      const rows = await messages();
      const byStatus: Record<string, number> = {};
      for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
      const parked = await schema.sql<{ n: string }>('SELECT count(*) AS n FROM parked_receipts');
      throw new Error(`${String(e)}: ${rows.length} stored, by status ${JSON.stringify(byStatus)}, ${parked[0]!.n} receipts parked, `
        + `queue ready ${await view.ready(queue)}; simulator ${JSON.stringify(sim.counters().totals)}`);
    });

    // Stored once each, every one DELIVERED, by one receipt that changed it.
    const rows = await messages();
    expect(rows).toHaveLength(total);
    expect(new Set(rows.map((r) => r.destination)).size).toBe(total);
    const receipts = await schema.sql<{ destination: string; n: string; changed: string }>(
      `SELECT m.destination, count(*) AS n, sum(r.changed) AS changed FROM messages m JOIN receipts r ON r.message_id = m.id
       WHERE r.status = 'DELIVERED' GROUP BY m.destination`);
    expect(receipts).toHaveLength(total);
    expect(receipts.filter((r) => Number(r.n) !== 1 || Number(r.changed) !== 1)).toEqual([]);
    expect(Number((await schema.sql<{ n: string }>('SELECT count(*) AS n FROM parked_receipts'))[0]!.n)).toBe(0);

    // What the SMSC saw: each message submitted once, and each receipt sent once, on a bind of the other instance.
    const submitted = sim.recordedSubmits();
    expect(submitted).toHaveLength(total);
    expect(new Set(submitted.map((s) => s.destinationAddr)).size).toBe(total);
    const counters = sim.counters();
    expect(counters.totals).toMatchObject({ receiptsRoutingFallback: 0, receiptsRedelivered: 0, receiptsPending: 0, receiptsSent: total });
    expect(counters.receiptsWaitingForReceiver).toBe(0);
    const [a, b] = INSTANCES.map((i) => counters.binds.filter((x) => x.systemType === i.systemType));
    for (const [own, other] of [[a!, b!], [b!, a!]] as const) {
      // The receipts sent on an instance's binds are those of the other's accepted submits, spread over both its binds.
      expect(sum(own, (x) => x.receiptsSent)).toBe(sum(other, (x) => x.submitResponses['ESME_ROK'] ?? 0));
      expect(sum(own, (x) => x.deliverSmResponses['ESME_ROK'] ?? 0)).toBe(sum(own, (x) => x.receiptsSent));
      expect(own.filter((x) => x.receiptsSent > 0).length).toBeGreaterThanOrEqual(2);
    }

    // Both instances consumed from the queue (each stores what it consumes as its own client) and both took receipts.
    const consumed = INSTANCES.map((i) => rows.filter((r) => r.client === i.client).length);
    expect(consumed[0]! + consumed[1]!).toBe(QUEUED);
    expect(consumed.every((c) => c > 0)).toBe(true);
    for (const port of httpPorts) {
      const seen = await receiptsSeen(port);
      expect((seen['matched'] ?? 0) + (seen['parked'] ?? 0)).toBeGreaterThan(0);
      expect(seen['error'] ?? 0).toBe(0);
    }
    expect(await view.ready(queue)).toBe(0);
    expect(await view.ready(`${queue}.dead`)).toBe(0);
  }, 240_000);
});
