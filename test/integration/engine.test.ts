import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { partResult } from '../../src/dispatch/part-result.js';
import { Bind } from '../../src/smpp/bind.js';
import type { Pool } from '../../src/smpp/pool.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { ioTurns, makePool, part, recordingMetrics, testTls, until } from '../support/engine.js';
import { recordingLog } from '../support/http.js';

const clock = new SystemClock();
const running: Array<{ pool?: Pool; sim?: SmscSimulator }> = [];

async function simulator(opts: Partial<ConstructorParameters<typeof SmscSimulator>[0]> = {}): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true, ...opts,
  }, clock, silentLog);
  const { port } = await sim.start();
  running.push({ sim });
  return { sim, port };
}

function track(pool: Pool): Pool {
  running.push({ pool });
  pool.start();
  return pool;
}

afterEach(async () => {
  for (const r of running.splice(0).reverse()) {
    await r.pool?.stop(100);
    await r.sim?.stop();
  }
});

const accepted = (o: Awaited<ReturnType<Pool['submit']>>) => o.parts.every((p) => p.kind === 'accepted');

describe('engine over real sockets', () => {
  it('binds, submits and gets a distinct message id per part over plain TCP', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port, binds: 2 }, clock));
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => pool.submit('sim', [part(`4915100000${i}`)])));
    expect(outcomes.every(accepted)).toBe(true);
    const ids = outcomes.map((o) => (o.parts[0]!.kind === 'accepted' ? o.parts[0]!.messageId : ''));
    expect(new Set(ids).size).toBe(200);
    expect(sim.counters().totals.submitsReceived).toBe(200);
  });

  it('binds and submits over TLS, verifying the simulator certificate', async () => {
    const { sim, port } = await simulator({ tls: { cert: testTls.serverCert(), key: testTls.serverKey() } });
    const pool = track(makePool({ port, tls: true }, clock));
    const outcome = await pool.submit('sim', [part('4915112345678')]);
    expect(accepted(outcome)).toBe(true);
    expect(sim.counters().totals.submitsReceived).toBe(1);
  });

  it('sends the parts of one message in order', async () => {
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: { min: 0, max: 5 } } });
    const pool = track(makePool({ port, binds: 3 }, clock));
    const parts = ['one', 'two', 'three', 'four'].map((t) => part('4915112345678', t));
    expect(accepted(await pool.submit('sim', parts))).toBe(true);
    expect(sim.recordedSubmits().map((s) => s.shortMessage.toString())).toEqual(['one', 'two', 'three', 'four']);
  });

  it('regression (smpp Session has no window): never holds more than the window outstanding under random delays', async () => {
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: { min: 0, max: 20 } } });
    const pool = track(makePool({ port, binds: 2, window: 10 }, clock));
    const outcomes = await Promise.all(Array.from({ length: 1000 }, (_, i) => pool.submit('sim', [part(`49151${i}`)])));
    expect(outcomes.every(accepted)).toBe(true);
    const binds = sim.counters().binds;
    expect(binds).toHaveLength(2);
    for (const b of binds) expect(b.maxOutstanding).toBeLessThanOrEqual(10);
    expect(Math.max(...binds.map((b) => b.maxOutstanding))).toBe(10);
  });

  it('connection dropped with 100 outstanding: reconnects, resends the uncertain ones, loses nothing, counts every duplicate', async () => {
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: 60_000 } });
    const { counts, metrics } = recordingMetrics();
    const pool = track(makePool({ port, window: 100 }, clock, { metrics }));
    const results = Promise.all(Array.from({ length: 300 }, (_, i) => pool.submit('sim', [part(`4917${i}`)])));
    await until(() => sim.counters().totals.submitsReceived === 100, 5_000, '100 outstanding');
    expect(pool.stats()[0]!.outstanding).toBe(100);
    sim.setBehaviour({ responseDelayMs: 0 });
    sim.dropConnections();
    const outcomes = await results;
    expect(outcomes.every(accepted)).toBe(true);
    expect(counts.uncertain).toBe(100);
    expect(counts.reconnect).toBe(1);
    // Each destination reached the SMSC; the only repeats are the 100 resends the metric counted.
    const seen = sim.recordedSubmits().map((s) => s.destinationAddr);
    expect(new Set(seen).size).toBe(300);
    expect(seen.length).toBe(300 + counts.uncertain);
  });

  it('connection dropped with policy fail: the outstanding parts come back uncertain, the rest are sent', async () => {
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: 60_000 } });
    const pool = track(makePool({ port, window: 10, onUncertain: 'fail' }, clock));
    const results = Promise.all(Array.from({ length: 30 }, (_, i) => pool.submit('sim', [part(`4918${i}`)])));
    await until(() => sim.counters().totals.submitsReceived === 10, 5_000, '10 outstanding');
    sim.setBehaviour({ responseDelayMs: 0 });
    sim.dropConnections();
    const outcomes = await results;
    const kinds = outcomes.map((o) => o.parts[0]!.kind);
    expect(kinds.filter((k) => k === 'uncertain')).toHaveLength(10);
    expect(kinds.filter((k) => k === 'accepted')).toHaveLength(20);
    expect(sim.recordedSubmits()).toHaveLength(30);
  });

  it('regression (smpp Session callbacks never expire): an unanswered submit_sm expires and a late response settles it', async () => {
    const manual = new ManualClock();
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: 300 } });
    const { counts, metrics } = recordingMetrics();
    const pool = track(makePool({ port, responseTimeoutMs: 1_000, onUncertain: 'fail' }, manual, { metrics }));
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound');
    const result = pool.submit('sim', [part('4915112345678')]);
    await until(() => sim.counters().totals.submitsReceived === 1, 5_000, 'submit at SMSC');
    manual.advance(1_000); // the pool's clock says the response is overdue
    expect(counts.uncertain).toBe(1);
    const outcome = await result; // the simulator answers 300 ms of real time later: a late response
    expect(outcome.parts[0]!.kind).toBe('accepted');
    expect(counts.late).toBe(1);
  });

  it('bad password: one bind attempt, an error, and no reconnect storm', async () => {
    const manual = new ManualClock();
    const { sim, port } = await simulator();
    const states: string[] = [];
    const pool = makePool({ port, password: 'wrong' }, manual);
    running.push({ pool });
    const poolWithStates = pool;
    poolWithStates.start();
    await until(() => pool.stats()[0]!.state === 'failed', 5_000, 'bind failed');
    for (let i = 0; i < 60; i++) {
      manual.advance(10_000); // ten minutes of backoff timers, if there were any
      await ioTurns();
    }
    states.push(pool.stats()[0]!.state);
    expect(states).toEqual(['failed']);
    expect(sim.counters().totals.bindsRejected).toBe(1);
    expect(pool.stats()[0]!.lastError).toMatch(/ESME_RINVPASWD/);
  });

  it('enquire_link unanswered: closes the link and binds again', async () => {
    const manual = new ManualClock();
    const { sim, port } = await simulator({ behaviour: { answerEnquireLink: false } });
    const pool = track(makePool({ port, enquireLinkMs: 30_000, responseTimeoutMs: 10_000 }, manual));
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound');
    manual.advance(30_000);
    await until(() => sim.counters().totals.enquireLinksReceived === 1, 5_000, 'enquire_link at SMSC');
    manual.advance(10_000);
    await until(() => pool.stats()[0]!.state !== 'bound', 5_000, 'link closed');
    sim.setBehaviour({ answerEnquireLink: true });
    for (let i = 0; i < 20 && pool.stats()[0]!.state !== 'bound'; i++) {
      manual.advance(1_000); // past the reconnect backoff
      await ioTurns(20);
    }
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound again');
    expect(pool.stats()[0]!.reconnects).toBe(1);
    expect(sim.counters().binds).toHaveLength(2);
  });

  it('malformed PDU from the SMSC (bad command_length): link reset, process alive, work continues', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port }, clock));
    expect(accepted(await pool.submit('sim', [part('1')]))).toBe(true);
    sim.injectRaw(Buffer.from('00000004000000150000000000000001', 'hex'));
    await until(() => pool.stats()[0]!.reconnects === 1 && pool.stats()[0]!.state === 'bound', 5_000, 'rebound');
    expect(accepted(await pool.submit('sim', [part('2')]))).toBe(true);
  });

  it('regression (smpp Session reader stops after one malformed PDU): a bad body gets generic_nack and the same link keeps working', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port }, clock));
    expect(accepted(await pool.submit('sim', [part('1')]))).toBe(true);
    // deliver_sm whose sm_length runs past the PDU: the header is readable, the body is not.
    sim.injectRaw(Buffer.from('0000002400000005000000000000abcd' + '00' + '0101' + '3100' + '0101' + '3200' + '040000' + '00' + '00' + '00000000' + 'ff41', 'hex'));
    expect(accepted(await pool.submit('sim', [part('2')]))).toBe(true);
    await until(() => sim.counters().totals.genericNacksReceived === 1, 5_000, 'generic_nack at SMSC');
    expect(pool.stats()[0]!.reconnects).toBe(0);
  });

  it('throttling: the bind slows down and retries the throttled parts in order, losing none', async () => {
    const { sim, port } = await simulator({ behaviour: { throttleRatePerBind: 50, throttleBurst: 5 } });
    const { counts, metrics } = recordingMetrics();
    const pool = track(makePool({ port, ratePerBind: 1000, burst: 20 }, clock, { metrics }));
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => pool.submit('sim', [part(`4919${i}`, 'a'), part(`4919${i}`, 'b')])));
    expect(outcomes.every(accepted)).toBe(true);
    expect(counts.throttled).toBeGreaterThan(0);
    expect(pool.stats()[0]).toMatchObject({ throttleEpisodes: 1, throttled: true });
    expect(pool.stats()[0]!.throttledSubmits).toBe(sim.counters().totals.throttled);
    // Parts of one message reach the SMSC in order even when one was throttled.
    const byDest = new Map<string, string[]>();
    for (const s of sim.recordedSubmits().filter((r) => r.messageId)) byDest.set(s.destinationAddr, [...(byDest.get(s.destinationAddr) ?? []), s.shortMessage.toString()]);
    for (const texts of byDest.values()) expect(texts).toEqual(['a', 'b']);
  });

  it('pacing with an injected clock: never more than rate + burst in any simulated second', async () => {
    const manual = new ManualClock();
    const { sim, port } = await simulator();
    const pool = track(makePool({ port, ratePerBind: 100, burst: 5 }, manual));
    await until(() => pool.stats()[0]!.state === 'bound', 5_000, 'bound');
    let done = 0;
    for (let i = 0; i < 250; i++) void pool.submit('sim', [part(`4916${i}`)]).then(() => { done++; });
    const receivedAt: number[] = []; // simulated second → cumulative count at the SMSC
    for (let step = 1; step <= 300; step++) {
      manual.advance(10);
      await until(() => sim.counters().totals.submitsReceived === pool.stats()[0]!.submitted, 5_000, 'submits at SMSC');
      if (step % 100 === 0) receivedAt.push(sim.counters().totals.submitsReceived);
    }
    await until(() => done === 250, 5_000, 'all answered');
    // Burst of 5 at the start, then 100 per simulated second.
    expect(receivedAt[0]).toBeLessThanOrEqual(105);
    expect(receivedAt[0]).toBeGreaterThanOrEqual(100);
    expect(receivedAt[1]! - receivedAt[0]!).toBeLessThanOrEqual(105);
    expect(receivedAt[2]).toBe(250);
  });

  it('a part that cannot be encoded is refused as invalid, and the queue behind it keeps moving', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port }, clock));
    const [tooLong, fine] = await Promise.all([
      pool.submit('sim', [part('1', 'x'.repeat(300)), part('1', 'second part')]),
      pool.submit('sim', [part('2')]),
    ]);
    expect(tooLong.parts[0]).toMatchObject({ kind: 'invalid' });
    expect(tooLong.parts[1]).toEqual({ kind: 'unsent', reason: 'earlier_part_failed' });
    expect(accepted(fine)).toBe(true);
    expect(sim.counters().totals.submitsReceived).toBe(1);
  });

  it('a part whose address a C-Octet String cannot carry is invalid, nothing of it is written, and the bind keeps serving', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port, window: 1 }, clock));
    // A NUL would end source_addr early and the rest would be read as the next fields; U+0100
    // would be written as a NUL by an 'ascii' encoder; 21 characters do not fit source_addr.
    const bad = [{ sourceAddr: 'AB\u0000\u0001\u00014477' }, { destinationAddr: '4477\u0100' }, { sourceAddr: 'x'.repeat(21) }];
    const outcomes = await Promise.all([
      ...bad.map((fields) => pool.submit('sim', [{ ...part('447700900001'), ...fields }, part('447700900001', 'second part')])),
      pool.submit('sim', [part('447700900002')]),
    ]);
    for (const o of outcomes.slice(0, 3)) {
      expect(o.parts[0]).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/^cannot encode submit_sm: (source_addr|destination_addr) /) });
      expect(o.parts[1]).toEqual({ kind: 'unsent', reason: 'earlier_part_failed' });
    }
    expect(accepted(outcomes[3]!)).toBe(true);
    expect(sim.recordedSubmits().map((s) => s.destinationAddr)).toEqual(['447700900002']);
    expect(pool.stats()[0]).toMatchObject({ state: 'bound', outstanding: 0 });
    expect(accepted(await pool.submit('sim', [part('447700900003')]))).toBe(true);
  });

  it('a part whose submit throws inside smppd (a bug) is FAILED as an internal error, not REJECTED; one error line; the queue keeps moving', async () => {
    const { sim, port } = await simulator();
    const lines: string[] = [];
    const pool = track(makePool({ port, window: 1 }, clock, { log: recordingLog(lines) }));
    // The injected fault: a TypeError, as a bug would throw, for one destination only.
    const trySubmit = Bind.prototype.trySubmit;
    const fault = vi.spyOn(Bind.prototype, 'trySubmit').mockImplementation(function (this: Bind<unknown>, pdu, ctx) {
      if (pdu.destinationAddr === '447700900666') throw new TypeError('injected fault');
      return trySubmit.call(this, pdu, ctx);
    });
    let outcomes: Array<Awaited<ReturnType<Pool['submit']>>>;
    try {
      outcomes = await Promise.all([
        ...Array.from({ length: 5 }, () => pool.submit('sim', [part('447700900666'), part('447700900666', 'second part')])),
        pool.submit('sim', [part('447700900002')]),
      ]);
    } finally {
      fault.mockRestore();
    }
    for (const o of outcomes.slice(0, 5)) {
      expect(o.parts).toEqual([{ kind: 'internal', reason: 'injected fault' }, { kind: 'unsent', reason: 'earlier_part_failed' }]);
      // Recorded FAILED with a reason that does not blame the message (REJECTED "not sendable" would).
      expect(partResult(1, 0, o.parts[0], 0)).toEqual({ part: 1, kind: 'final', status: 'FAILED', reason: 'internal error: injected fault', attempts: 0 });
    }
    expect(accepted(outcomes[5]!)).toBe(true);
    expect(sim.recordedSubmits().map((s) => s.destinationAddr)).toEqual(['447700900002']);
    // Five faults, one line at once: the others are counted for the interval's end.
    const errors = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === 'submit_internal_error');
    expect(errors).toEqual([expect.objectContaining({ level: 'error', bind: 'sim#0', error: 'injected fault', stack: expect.stringContaining('TypeError: injected fault') })]);
    expect(pool.stats()[0]).toMatchObject({ state: 'bound', outstanding: 0 });
  });

  it('bind settings no bind PDU can carry stop the bind before it connects, without a reconnect storm', async () => {
    const manual = new ManualClock();
    const { sim, port } = await simulator();
    const pool = makePool({ port, password: 'pw\u0000rd' }, manual);
    running.push({ pool });
    pool.start();
    await until(() => pool.stats()[0]!.state === 'failed', 5_000, 'bind failed');
    for (let i = 0; i < 60; i++) {
      manual.advance(10_000);
      await ioTurns();
    }
    expect(pool.stats()[0]).toMatchObject({ state: 'failed', lastError: expect.stringMatching(/^bind settings do not fit a bind PDU: cannot encode bind_transceiver: password holds a NUL/) });
    expect(pool.stats()[0]!.lastError).not.toContain('pw\u0000rd');
    expect(sim.counters().connectionsAccepted).toBe(0);
  });

  it('answers an unbind from the SMSC, closes, and binds again', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port }, clock));
    expect(accepted(await pool.submit('sim', [part('1')]))).toBe(true);
    sim.injectRaw(Buffer.from('0000001000000006000000000000abcd', 'hex')); // unbind, sequence 0xabcd
    await until(() => pool.stats()[0]!.reconnects === 1 && pool.stats()[0]!.state === 'bound', 5_000, 'bound again');
    expect(accepted(await pool.submit('sim', [part('2')]))).toBe(true);
    expect(sim.counters().binds).toHaveLength(2);
  });

  it('answers an unknown request with generic_nack ESME_RINVCMDID and keeps the link', async () => {
    const { sim, port } = await simulator();
    const pool = track(makePool({ port }, clock));
    expect(accepted(await pool.submit('sim', [part('1')]))).toBe(true);
    sim.injectRaw(Buffer.from('00000010000007770000000000000042', 'hex'));
    await until(() => sim.counters().totals.genericNacksReceived === 1, 5_000, 'generic_nack at SMSC');
    expect(accepted(await pool.submit('sim', [part('2')]))).toBe(true);
    expect(pool.stats()[0]!.reconnects).toBe(0);
  });

  it('TLS with a client certificate (mutual TLS)', async () => {
    const { sim, port } = await simulator({ tls: { cert: testTls.serverCert(), key: testTls.serverKey(), ca: testTls.ca(), requestCert: true } });
    const u = makePool({ port, tls: true }, clock);
    const pool = track(u);
    expect(accepted(await pool.submit('sim', [part('1')]))).toBe(true);
    expect(sim.counters().totals.submitsReceived).toBe(1);
  });

  it('TLS refuses a server certificate it cannot verify, and never binds', async () => {
    const { sim, port } = await simulator({ tls: { cert: testTls.serverCert(), key: testTls.serverKey() } });
    const { counts, metrics } = recordingMetrics();
    const pool = track(makePool({ port, tls: true, caOverride: testTls.serverCert() }, clock, { metrics }));
    await until(() => pool.stats()[0]!.lastError !== '', 5_000, 'a failed attempt');
    expect(pool.stats()[0]!.lastError).toMatch(/certificate|self.signed|verify/i);
    expect(pool.stats()[0]!.state).not.toBe('bound');
    expect(sim.counters().bindsActive).toBe(0);
    expect(counts.reconnect).toBeGreaterThan(0);
  });

  it('a bind that refuses every part for a bind-level reason is logged once, not once per part', async () => {
    // ESME_RINVBNDSTS (0x04): the bind, not the message, is at fault.
    const { port } = await simulator({ behaviour: { submitStatus: { 0x04: 1 } } });
    const lines: string[] = [];
    const log = recordingLog(lines);
    const pool = track(makePool({ port, maxAttempts: 2 }, clock, { log }));
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => pool.submit('sim', [part(`4915100001${i}`)])));
    expect(outcomes.every((o) => o.parts[0]?.kind === 'failed')).toBe(true);
    expect(lines.filter((l) => l.includes('bind_error_status'))).toHaveLength(1);
  });
});
