/**
 * `smppd start` in a child process, with a fault injected from outside the product (a module
 * loaded with `node --import` that throws, or leaves a promise rejected, on SIGUSR2): the daemon
 * writes one fatal log line, flushed, and exits 1 for the service manager to restart it, instead
 * of running on half-alive.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups } from '../support/daemon-child.js';
import type { JsonLinesProcess } from '../support/json-lines-process.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startWithFault(fault: 'throw' | 'reject'): Promise<JsonLinesProcess> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'fatal', password: 'fatalpw' }], behaviour: { receipts: { enabled: false } },
  }, new SystemClock(), silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const { configPath } = daemonFolder(cleanups, {
    prefix: 'smppd-fatal-', token: 'fatal-test-token-0123456789',
    upstream: `{ name: sim, host: 127.0.0.1, port: ${port}, systemId: fatal, password: fatalpw, binds: 1 }`,
  });
  const child = startDaemonChild(cleanups, configPath, { imports: ['./test/support/inject-fault.ts'], env: { ...process.env, SMPPD_TEST_FAULT: fault } });
  await child.next('started', 1, 60_000);
  return child;
}

describe('a fault nothing handles', () => {
  it.each([
    ['an uncaught exception', 'throw', 'uncaughtException', 'injected fault'],
    ['an unhandled rejection', 'reject', 'unhandledRejection', 'injected rejection'],
  ] as const)('%s: one fatal line with the error, flushed, then exit 1', async (_name, fault, origin, message) => {
    const child = await startWithFault(fault);
    child.child.kill('SIGUSR2');
    expect(await child.exited()).toEqual({ code: 1, signal: null });
    const fatal = child.events.filter((e) => e.level === 'fatal');
    expect(fatal).toEqual([expect.objectContaining({
      event: 'fatal', service: 'smppd', origin, err: expect.objectContaining({ type: 'Error', message, stack: expect.stringContaining('inject-fault.ts') }),
    })]);
    // The last line it logged: nothing ran on after it. A line logged before it may still land
    // after it (its asynchronous write was in flight when the flush wrote the rest), never one
    // logged later.
    expect(Number.isFinite(Date.parse(String(fatal[0]!.time)))).toBe(true);
    const after = child.events.slice(child.events.indexOf(fatal[0]!) + 1);
    expect(after.filter((e) => Date.parse(String(e.time)) > Date.parse(String(fatal[0]!.time)))).toEqual([]);
  }, 90_000);
});
