/**
 * Duplicates only from the wire: a daemon killed with SIGKILL under load, unpaced, and started
 * again on the same SQLite store sends again only what was written and not answered, or answered
 * and not yet stored (whose window slot stays held until its commit): at most binds × window
 * parts reach the SMSC twice, long messages cut mid-way included (their accepted parts are
 * stored as they are accepted). Counted at the simulator, which records every submit_sm.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups } from '../support/daemon-child.js';
import { until } from '../support/engine.js';
import type { JsonLinesProcess } from '../support/json-lines-process.js';
import { duplicatedParts, everyAnsweredSent, sendUntil } from '../support/kill-load.js';

const TOKEN = 'crash-dup-token-0123456789';
const BINDS = 2;
const WINDOW = 5;
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function httpPort(child: JsonLinesProcess): Promise<number> {
  const [line] = await child.next('http_listening', 1, 60_000);
  return Number(line!.port);
}

/**
 * Sends (`clients` loops, `text`, `parts` each) until the simulator has `killAfter` submits,
 * kills the daemon, starts it again, and waits for every answered part: the parts sent twice.
 */
async function killUnderLoad(o: { clients: number; killAfter: number; text?: (destination: string) => string; parts?: number }): Promise<number> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'crash', password: 'crashpw' }], record: true,
    behaviour: { responseDelayMs: { min: 0, max: 0 }, receipts: { enabled: false } },
  }, new SystemClock(), silentLog);
  const { port: smscPort } = await sim.start();
  cleanups.push(() => sim.stop());
  const { configPath } = daemonFolder(cleanups, {
    prefix: 'smppd-crash-dup-', token: TOKEN,
    upstream: `{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: crash, password: crashpw, binds: ${BINDS}, window: ${WINDOW}, onUncertain: resend }`,
  });

  let daemon = startDaemonChild(cleanups, configPath);
  let port = await httpPort(daemon);
  const answered = new Set<string>();
  let killed = false;
  const load = sendUntil({
    clients: o.clients, port: () => port, token: TOKEN, senderId: 'crash', prefix: '4916', answered, stop: () => killed, ...(o.text ? { text: o.text } : {}),
  });
  await until(() => sim.recordedSubmits().length >= o.killAfter, 60_000, 'the SMSC receiving');
  daemon.kill();
  killed = true;
  await daemon.exited();
  await load;

  daemon = startDaemonChild(cleanups, configPath);
  port = await httpPort(daemon);
  await until(() => everyAnsweredSent(sim, answered, () => o.parts ?? 1), 90_000, 'every answered part at the SMSC');
  return duplicatedParts(sim);
}

describe('kill -9 under load, unpaced', () => {
  it('resends at most binds × window parts: what was written and not stored', async ({ annotate }) => {
    const duplicates = await killUnderLoad({ clients: 32, killAfter: 1_500 });
    await annotate(`parts sent twice after kill -9 (SQLite, ${BINDS} binds × window ${WINDOW}): ${duplicates}`);
    expect(duplicates).toBeLessThanOrEqual(BINDS * WINDOW);
  }, 180_000);

  it('resends no part of a long message cut mid-way that the SMSC accepted and smppd stored', async ({ annotate }) => {
    // Five parts each (GSM-7 with a UDH: 153 characters a part). Fewer senders: a slot is kept
    // from each part's answer to its commit, and the backlog at the kill should stay of the same order.
    const duplicates = await killUnderLoad({ clients: 8, killAfter: 2_000, parts: 5, text: (d) => `m ${d} ${'x'.repeat(700)}` });
    await annotate(`parts of 5-part messages sent twice after kill -9 (SQLite, ${BINDS} binds × window ${WINDOW}): ${duplicates}`);
    expect(duplicates).toBeLessThanOrEqual(BINDS * WINDOW);
  }, 180_000);
});
