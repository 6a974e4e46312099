import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { Keepalive } from '../../../src/smpp/keepalive.js';
import { ReconnectPolicy } from '../../../src/smpp/reconnect.js';

function harness(answer: boolean) {
  const clock = new ManualClock();
  let lastReceived = 0;
  const probes: number[] = [];
  const closed: string[] = [];
  const ka = new Keepalive({
    sendEnquireLink: () => {
      probes.push(clock.now());
      if (answer) clock.setTimer(5, () => { lastReceived = clock.now(); });
    },
    lastReceivedAt: () => lastReceived,
    closeDead: (r) => closed.push(r),
  }, clock, 30_000, 10_000);
  return { clock, ka, probes, closed };
}

describe('Keepalive', () => {
  it('sends enquire_link every interval while answered', () => {
    const h = harness(true);
    h.ka.start();
    h.clock.advance(95_000);
    expect(h.probes).toEqual([30_000, 60_000, 90_000]);
    expect(h.closed).toEqual([]);
  });

  it('closes the link when an enquire_link goes unanswered for the timeout', () => {
    const h = harness(false);
    h.ka.start();
    h.clock.advance(39_999);
    expect(h.closed).toEqual([]);
    h.clock.advance(1);
    expect(h.closed).toHaveLength(1);
    expect(h.probes).toEqual([30_000]);
  });
});

describe('ReconnectPolicy', () => {
  const backoff = { initialMs: 1000, maxMs: 60_000, multiplier: 2 };

  it('backs off exponentially with full jitter, capped', () => {
    const p = new ReconnectPolicy(backoff, () => 0.999);
    const delays = Array.from({ length: 10 }, () => p.next({ kind: 'connect_failed', error: 'ECONNREFUSED' }));
    expect(delays.map((d) => (d.action === 'retry' ? d.delayMs : -1))).toEqual([999, 1998, 3996, 7992, 15984, 31968, 59940, 59940, 59940, 59940]);
  });

  it('spreads binds that fail together', () => {
    const p1 = new ReconnectPolicy(backoff, () => 0.1);
    const p2 = new ReconnectPolicy(backoff, () => 0.9);
    expect(p1.next({ kind: 'closed', reason: 'x' })).not.toEqual(p2.next({ kind: 'closed', reason: 'x' }));
  });

  it('starts over after a successful bind', () => {
    const p = new ReconnectPolicy(backoff, () => 0.5);
    for (let i = 0; i < 5; i++) p.next({ kind: 'connect_failed', error: 'x' });
    p.onBound();
    expect(p.next({ kind: 'closed', reason: 'x' })).toEqual({ action: 'retry', delayMs: 500 });
  });

  it('stops for good on bad credentials, retries on ESME_RALYBND', () => {
    const p = new ReconnectPolicy(backoff, () => 0.5);
    expect(p.next({ kind: 'bind_rejected', commandStatus: 0x0e }).action).toBe('stop');
    expect(p.next({ kind: 'bind_rejected', commandStatus: 0x0f }).action).toBe('stop');
    expect(p.next({ kind: 'bind_rejected', commandStatus: 0x05 }).action).toBe('retry');
  });
});
