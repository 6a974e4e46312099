/**
 * BrokerLink on a ManualClock with a scripted `connect`: the delays between attempts are full
 * jitter under a doubling ceiling, a connection that comes up resets them, a failed setup counts
 * as a failed attempt, a change of state is logged once, and stop ends the attempts. No broker.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BrokerLink, type ChannelModel } from '../../../src/amqp/broker-link.js';
import { ManualClock } from '../../../src/core/clock.js';
import { recordingLog } from '../../support/http.js';

class FakeConnection extends EventEmitter {
  closed = false;
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  /** The broker or the network ends it. */
  drop(): void {
    this.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    this.closed = true;
    this.emit('close', new Error('read ECONNRESET'));
  }
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

function setup(script: Array<'refuse' | 'accept'>, onUp: (c: ChannelModel) => Promise<void> = async () => {}) {
  const clock = new ManualClock();
  const attempts: number[] = [];
  const connections: FakeConnection[] = [];
  const logs: string[] = [];
  let downs = 0;
  const link = new BrokerLink({
    url: 'amqp://u:secret-pw@mq:5672/', endpoint: 'amqp://mq:5672 vhost /', name: 'smppd test', clock, log: recordingLog(logs),
    reconnect: { initialMs: 1_000, maxMs: 8_000, multiplier: 2 }, random: () => 0.5, onUp, onDown: () => { downs++; },
    connect: async () => {
      attempts.push(clock.now());
      if ((script.shift() ?? 'accept') === 'refuse') throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5672'), { code: 'ECONNREFUSED' });
      const c = new FakeConnection();
      connections.push(c);
      return c as unknown as ChannelModel;
    },
  });
  const events = (name: string): number => logs.filter((l) => (JSON.parse(l) as { event: string }).event === name).length;
  return { clock, link, attempts, connections, logs, events, downs: () => downs };
}

describe('BrokerLink', () => {
  it('tries again after full-jitter delays under a doubling ceiling, and logs the change once', async () => {
    const t = setup(['refuse', 'refuse', 'refuse', 'refuse', 'refuse', 'accept']);
    t.link.start();
    await turns();
    // Small steps: each attempt's next timer is set when its (async) connect has failed.
    for (let i = 0; i < 200; i++) {
      t.clock.advance(100);
      await turns();
    }
    // random 0.5: half of 1, 2, 4, 8, 8 seconds.
    const gaps = t.attempts.slice(1).map((at, i) => at - t.attempts[i]!);
    expect(gaps).toEqual([500, 1_000, 2_000, 4_000, 4_000]);
    expect(t.link.up).toBe(true);
    expect(t.events('amqp_unavailable')).toBe(1);
    expect(t.events('amqp_connected')).toBe(1);
    expect(t.logs.join('\n')).not.toContain('secret-pw');
    expect(JSON.parse(t.logs.find((l) => l.includes('amqp_unavailable'))!)).toMatchObject({ reason: 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.1:5672', endpoint: 'amqp://mq:5672 vhost /' });
  });

  it('a lost connection is reported down and reconnected, the delays starting over', async () => {
    const t = setup(['accept', 'accept']);
    t.link.start();
    await turns();
    t.connections[0]!.drop();
    expect(t.link.up).toBe(false);
    expect(t.downs()).toBe(1);
    t.clock.advance(499);
    await turns();
    expect(t.attempts).toHaveLength(1);
    t.clock.advance(1);
    await turns();
    expect(t.attempts).toHaveLength(2);
    expect(t.link.up).toBe(true);
    expect(t.events('amqp_connected')).toBe(2);
    expect(JSON.parse(t.logs.find((l) => l.includes('amqp_unavailable'))!)).toMatchObject({ reason: 'ECONNRESET: read ECONNRESET' });
  });

  it('a failed setup closes the connection and counts as a failed attempt', async () => {
    let ups = 0;
    const t = setup([], async () => {
      if (++ups < 3) throw Object.assign(new Error('PRECONDITION_FAILED - inequivalent arg'), { code: 406 });
    });
    t.link.start();
    await turns();
    expect(t.connections[0]!.closed).toBe(true);
    t.clock.advance(500);
    await turns();
    expect(t.connections[1]!.closed).toBe(true);
    t.clock.advance(1_000);
    await turns();
    expect(t.link.up).toBe(true);
    expect(t.connections[2]!.closed).toBe(false);
    expect(JSON.parse(t.logs.find((l) => l.includes('amqp_unavailable'))!).reason).toBe('setting up failed: 406: PRECONDITION_FAILED - inequivalent arg');
  });

  it('fail() closes a connection whose channel broke, and a new one follows', async () => {
    const t = setup([]);
    t.link.start();
    await turns();
    t.link.fail('the channel closed: 404 NOT_FOUND');
    await turns();
    expect(t.connections[0]!.closed).toBe(true);
    t.clock.advance(500);
    await turns();
    expect(t.connections).toHaveLength(2);
    expect(t.link.up).toBe(true);
    expect(JSON.parse(t.logs.find((l) => l.includes('amqp_unavailable'))!).reason).toBe('the channel closed: 404 NOT_FOUND');
  });

  it('stop closes the connection and ends the attempts', async () => {
    const t = setup(['refuse']);
    t.link.start();
    await turns();
    await t.link.stop();
    expect(t.clock.pendingTimers).toBe(0);
    t.clock.advance(60_000);
    await turns();
    expect(t.attempts).toHaveLength(1);

    const u = setup([]);
    u.link.start();
    await turns();
    await u.link.stop();
    expect(u.connections[0]!.closed).toBe(true);
    expect(u.downs()).toBe(0);
    expect(u.clock.pendingTimers).toBe(0);
  });
});
