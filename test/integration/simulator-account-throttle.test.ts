import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { isResp, RawClient } from '../support/raw-esme.js';

const THROTTLED = 0x58;
const sims: SmscSimulator[] = [];
const clients: RawClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of sims.splice(0)) await s.stop();
});

/** Sends `n` submit_sm on `c` at once and returns how many the SMSC accepted; the rest must be throttled. */
async function accepted(c: RawClient, n: number): Promise<number> {
  const pdus = Array.from({ length: n }, (_, i) => c.submit(`4915${i}`, 'x'));
  c.send(...pdus);
  let ok = 0;
  for (const p of pdus) {
    const status = (await c.take(isResp(p.sequenceNumber), `resp ${p.sequenceNumber}`)).commandStatus;
    if (status === 0) ok++;
    else expect(status).toBe(THROTTLED);
  }
  return ok;
}

describe("the simulator's per-account throttle over real sockets", () => {
  it('holds all binds of a system_id to throttleRatePerAccount together, leaves another account alone, and follows setBehaviour', async () => {
    // A manual clock makes "one second" exact; the bytes still cross real sockets.
    const clock = new ManualClock();
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0,
      accounts: [{ systemId: 'acme', password: 'pw' }, { systemId: 'other', password: 'pw' }],
      behaviour: { throttleRatePerAccount: 10, throttleAccountBurst: 4 },
    }, clock, silentLog);
    sims.push(sim);
    const { port } = await sim.start();
    const [a1, a2, other] = await Promise.all([RawClient.open(port), RawClient.open(port), RawClient.open(port)]);
    clients.push(a1, a2, other);
    expect(await a1.bind('bind_transceiver', 'acme', 'pw')).toBe(0);
    expect(await a2.bind('bind_transmitter', 'acme', 'pw')).toBe(0);
    expect(await other.bind('bind_transceiver', 'other', 'pw')).toBe(0);

    // One simulated second, 100 ms steps, both binds asking for far more than the account's rate;
    // which bind goes first alternates, so each gets a share.
    const okPerBind = [0, 0];
    for (let step = 0; step <= 10; step++) {
      const order = step % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) okPerBind[i]! += await accepted([a1, a2][i]!, 2);
      if (step < 10) clock.advance(100);
    }
    const total = okPerBind[0]! + okPerBind[1]!;
    expect(total).toBeGreaterThanOrEqual(10);
    expect(total).toBeLessThanOrEqual(10 + 4); // rate + burst
    expect(okPerBind[0]).toBeGreaterThan(0);
    expect(okPerBind[1]).toBeGreaterThan(0);
    // The account is spent; another system_id has a bucket of its own, with its full burst.
    expect(await accepted(other, 20)).toBe(4);
    const binds = sim.counters().binds;
    expect(binds.filter((b) => b.systemId === 'acme').reduce((n, b) => n + b.throttled, 0)).toBe(44 - total);
    expect(binds.filter((b) => b.systemId === 'acme').map((b) => b.submitResponses['ESME_ROK'] ?? 0)).toEqual(okPerBind);
    expect(binds.find((b) => b.systemId === 'other')).toMatchObject({ throttled: 16, submitResponses: { ESME_ROK: 4 } });

    // Lifting the limit mid-run lets everything through at once …
    sim.setBehaviour({ throttleRatePerAccount: 0 });
    expect(await accepted(a1, 10) + await accepted(a2, 10)).toBe(20);
    // … and bringing it back with a smaller burst caps the tokens saved meanwhile.
    clock.advance(5_000);
    sim.setBehaviour({ throttleRatePerAccount: 10, throttleAccountBurst: 2 });
    expect(await accepted(a1, 5)).toBe(2);
    expect(await accepted(a2, 5)).toBe(0);
    clock.advance(100);
    expect(await accepted(a2, 5)).toBe(1);
    // A reset gives the account a full burst again.
    sim.resetCounters();
    expect(await accepted(a2, 5)).toBe(2);
    expect(sim.counters().totals.throttled).toBe(3);
  });
});
