/**
 * Duplicates only from the wire, with two instances on one PostgreSQL schema: one is killed
 * with SIGKILL while both send unpaced under load. The survivor sends the parts the dead one had
 * claimed in flight within the lease and 5 s (the rest of its queue, which the survivor may claim
 * at once, drains at the cores' pace); every message answered 200 reaches the SMSC; at most binds × window of the dead
 * one's parts reach it twice (written and not answered, or answered and not yet stored, whose
 * window slot stays held until the commit), long messages cut mid-way included. Counted at the
 * simulator.
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
import { duplicatedParts, everyAnsweredSent, partCounts, partKey, sendUntil } from '../../support/kill-load.js';
import { describePg, PG_URL, pgSchema } from './pg-store.js';

const TOKEN = 'pg-kill-load-token-0123456789';
const BINDS = 2;
const WINDOW = 5;
const LEASE_SECONDS = 3;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('kill -9 of one of two instances sending unpaced on PostgreSQL', () => {
  it('resends at most binds × window of the dead one\'s parts, and its in-flight ones within the lease and 5 s', async ({ annotate }) => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pgd', password: 'pgdpw' }], record: true,
      behaviour: { responseDelayMs: { min: 0, max: 0 }, receipts: { enabled: false } },
    }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const dir = mkdtempSync(join(tmpdir(), 'smppd-pg-kill-load-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = (instanceId: string) => [
      'log: { level: info }',
      'http: { listen: "127.0.0.1:0" }',
      `clients: [{ name: app, token: ${TOKEN} }]`,
      `store: { kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: ${instanceId}, leaseSeconds: ${LEASE_SECONDS} }`,
      `upstreams: [{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pgd, password: pgdpw, binds: ${BINDS}, window: ${WINDOW}, onUncertain: resend }]`,
      '',
    ].join('\n');
    writeFileSync(join(dir, 'a.yaml'), config('host-a'));
    const a = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', join(dir, 'a.yaml')]);
    cleanups.push(() => a.kill());
    const [b, portA] = await Promise.all([
      startDaemon(await parseConfig(config('host-b'), dir), { clock: new SystemClock(), log: silentLog }),
      a.next('http_listening', 1, 60_000).then((e) => Number(e[0]!.port)),
    ]);
    cleanups.push(() => b.stop());

    const answered = new Set<string>();
    let aKilled = false;
    let stopped = false;
    // Most of the load on A (the one killed), some of it 5-part messages, some on B throughout.
    const common = { token: TOKEN, senderId: 'pgd', answered };
    const load = Promise.all([
      sendUntil({ ...common, clients: 18, port: () => portA, prefix: '4917', stop: () => aKilled }),
      sendUntil({ ...common, clients: 4, port: () => portA, prefix: '4919', stop: () => aKilled, text: (d) => `m ${d} ${'x'.repeat(700)}` }),
      sendUntil({ ...common, clients: 4, port: () => b.http.port, prefix: '4918', stop: () => stopped }),
    ]);
    await until(() => sim.recordedSubmits().length >= 1_500, 60_000, 'both instances sending');
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    aKilled = true;
    await a.exited();
    // What A left claimed in flight: the parts the survivor takes over once A's lease is over.
    const leftInFlight = (await schema.sql<{ destination: string; short_message: Buffer }>(
      "SELECT m.destination, p.short_message FROM parts p JOIN messages m ON m.id = p.message_id WHERE p.state = 'inflight' AND p.claimed_by = 'host-a'",
    )).map((p) => partKey(p.destination, p.short_message));
    const atKill = partCounts(sim);
    await new Promise((r) => setTimeout(r, 500));
    stopped = true;
    await load;

    // Taken over: each of those parts reached the SMSC once more than it had at the kill.
    await until(() => {
      const now = partCounts(sim);
      return leftInFlight.every((k) => (now.get(k) ?? 0) > (atKill.get(k) ?? 0));
    }, 60_000, 'the dead instance\'s parts sent by the survivor');
    const takenOverMs = Date.now() - killedAt;
    // The rest of A's queue, which B could claim at once, drains at whatever pace the cores allow.
    await until(() => everyAnsweredSent(sim, answered, (d) => (d.startsWith('4919') ? 5 : 1)), 60_000, 'every answered message at the SMSC');
    const duplicates = duplicatedParts(sim);
    await annotate(`parts sent twice after kill -9 (PostgreSQL, ${BINDS} binds × window ${WINDOW}): ${duplicates}; `
      + `the ${leftInFlight.length} parts the dead one had in flight sent by the survivor ${takenOverMs} ms after the kill (lease ${LEASE_SECONDS} s)`);

    expect(leftInFlight.length).toBeGreaterThan(0);
    expect(duplicates).toBeLessThanOrEqual(BINDS * WINDOW);
    expect(takenOverMs).toBeLessThanOrEqual((LEASE_SECONDS + 5) * 1000);
  }, 180_000);
});
