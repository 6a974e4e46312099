/**
 * The promise that matters most: a message answered 200 is never lost. The daemon runs as a
 * child process (`smppd start` from the sources) against the simulator in this process; it is
 * killed with SIGKILL under load, started again on the same store, and every message it had
 * answered 200 for must reach the SMSC, at least once. Messages sent twice are those that were
 * written at the kill and not stored: at most binds × window (a slot stays held from the answer
 * to the commit). Likewise for what
 * the SMSC sends: the parts of a long MO message that were answered survive the kill.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups } from '../support/daemon-child.js';
import { until } from '../support/engine.js';
import type { JsonLinesProcess } from '../support/json-lines-process.js';
import { duplicatedDestinations, everyAnsweredSent, sendUntil } from '../support/kill-load.js';

const TOKEN = 'crash-test-token-0123456789';
const BINDS = 2;
const WINDOW = 50;
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const startDaemon = (configPath: string): JsonLinesProcess => startDaemonChild(cleanups, configPath);

async function httpPort(child: JsonLinesProcess): Promise<number> {
  const [line] = await child.next('http_listening', 1, 60_000);
  return Number(line!.port);
}

describe('kill -9 under load', () => {
  it('every message answered 200 reaches the SMSC after a restart; duplicates stay within the in-flight window', async () => {
    const clock = new SystemClock();
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'crash', password: 'crashpw' }], record: true,
      behaviour: { responseDelayMs: { min: 0, max: 20 }, receipts: { enabled: false } },
    }, clock, silentLog);
    const { port: smscPort } = await sim.start();
    cleanups.push(() => sim.stop());
    const { configPath } = daemonFolder(cleanups, {
      prefix: 'smppd-crash-', token: TOKEN,
      upstream: `{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: crash, password: crashpw, binds: ${BINDS}, window: ${WINDOW}, ratePerBind: 50, onUncertain: resend }`,
    });

    let daemon = startDaemon(configPath);
    let port = await httpPort(daemon);
    const answered = new Set<string>();
    let killed = false;
    // 20 clients send until the kill; the kill comes once a few hundred are answered, the SMSC is
    // receiving and a backlog is queued (so some are in flight, some queued, some done). The binds
    // are paced below what HTTP takes even on a loaded machine, so the backlog forms.
    const load = sendUntil({ clients: 20, port: () => port, token: TOKEN, senderId: 'crash', prefix: '4915', answered, stop: () => killed });
    await until(() => answered.size >= 600 && sim.recordedSubmits().length >= 50 && answered.size - sim.recordedSubmits().length >= 100,
      60_000, 'load under way');
    daemon.kill();
    killed = true;
    await daemon.exited();
    await load;
    const beforeRestart = sim.recordedSubmits().length;
    expect(beforeRestart).toBeLessThan(answered.size); // work was still queued at the kill

    daemon = startDaemon(configPath);
    port = await httpPort(daemon);
    await until(() => everyAnsweredSent(sim, answered), 60_000, 'every answered message at the SMSC');

    const duplicates = duplicatedDestinations(sim);
    // Written and not stored at the kill: outstanding or held, within the windows.
    expect(duplicates).toBeLessThanOrEqual(WINDOW * BINDS);
    // A daemon answering 200 only after its commit: nothing reached the SMSC that it did not answer for, but
    // requests cut by the kill may have been committed without their answer arriving.
    expect(new Set(sim.recordedSubmits().map((s) => s.destinationAddr)).size).toBeGreaterThanOrEqual(answered.size);
  }, 180_000);
});

describe('kill -9 between the parts of a long MO message', () => {
  it('the parts answered before the kill and the last one after the restart make the whole message', async () => {
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'crash', password: 'crashpw' }], behaviour: { receipts: { enabled: false } },
    }, new SystemClock(), silentLog);
    const { port: smscPort } = await sim.start();
    cleanups.push(() => sim.stop());
    const { configPath, storePath } = daemonFolder(cleanups, {
      prefix: 'smppd-crash-mo-', token: TOKEN, upstream: `{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: crash, password: crashpw, binds: 1 }`,
    });
    // Three parts under one UDH reference, GSM 7-bit unpacked (TS 23.040 §9.2.3.24.1).
    const texts = ['a'.repeat(153), 'b'.repeat(153), 'the end'];
    const part = (seq: number) => ({
      source: '447700900123', destination: '12345', dataCoding: 0, esmClass: 0x40,
      shortMessage: Buffer.concat([Buffer.from([5, 0, 3, 0x2a, 3, seq]), Buffer.from(texts[seq - 1]!, 'latin1')]),
    });
    const answeredOk = () => sim.counters().totals.deliverSmResponses.ESME_ROK ?? 0;

    let daemon = startDaemon(configPath);
    await httpPort(daemon);
    await until(() => sim.counters().bindsActive === 1, 30_000, 'the bind');
    expect(sim.sendMo(part(1))).toBeDefined();
    expect(sim.sendMo(part(2))).toBeDefined();
    await until(() => answeredOk() === 2, 30_000, 'both parts answered ESME_ROK');
    daemon.kill();
    await daemon.exited();

    daemon = startDaemon(configPath);
    await httpPort(daemon);
    await until(() => sim.counters().bindsActive === 1, 30_000, 'the bind again');
    expect(sim.sendMo(part(3))).toBeDefined();
    await until(() => answeredOk() === 3, 30_000, 'the last part answered ESME_ROK');

    const db = new Database(storePath, { readonly: true, fileMustExist: true });
    cleanups.push(() => { db.close(); });
    expect(db.prepare('SELECT source, destination, text, parts, missing_parts FROM inbound').all()).toEqual([
      { source: '447700900123', destination: '12345', text: texts.join(''), parts: 3, missing_parts: null },
    ]);
    expect(db.prepare('SELECT count(*) AS n FROM inbound_parts').get()).toEqual({ n: 0 });
  }, 120_000);
});
