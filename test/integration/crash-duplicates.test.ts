/**
 * Duplicates only from the wire: a daemon killed with SIGKILL under load, unpaced, and started
 * again on the same SQLite store sends again only what was written and not answered, or answered
 * and not yet stored (whose window slot stays held until its commit): at most binds × window
 * messages reach the SMSC twice. Counted at the simulator, which records every submit_sm.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups } from '../support/daemon-child.js';
import { until } from '../support/engine.js';
import type { JsonLinesProcess } from '../support/json-lines-process.js';
import { duplicatedDestinations, everyAnsweredSent, sendUntil } from '../support/kill-load.js';

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

describe('kill -9 under load, unpaced', () => {
  it('resends at most binds × window messages: what was written and not stored', async ({ annotate }) => {
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
    const load = sendUntil({ clients: 32, port: () => port, token: TOKEN, senderId: 'crash', prefix: '4916', answered, stop: () => killed });
    await until(() => sim.recordedSubmits().length >= 1_500, 60_000, 'the SMSC receiving');
    daemon.kill();
    killed = true;
    await daemon.exited();
    await load;

    daemon = startDaemonChild(cleanups, configPath);
    port = await httpPort(daemon);
    await until(() => everyAnsweredSent(sim, answered), 60_000, 'every answered message at the SMSC');

    const duplicates = duplicatedDestinations(sim);
    await annotate(`duplicates after kill -9 (SQLite, ${BINDS} binds × window ${WINDOW}): ${duplicates}`);
    expect(duplicates).toBeLessThanOrEqual(BINDS * WINDOW);
  }, 180_000);
});
