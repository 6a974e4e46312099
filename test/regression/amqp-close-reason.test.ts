/**
 * Regression: at a broker restart the daemon logged `amqp_unavailable` with the reason "the
 * channel closed: no reason given", for a graceful shutdown (320 CONNECTION_FORCED) and for a
 * killed broker (the socket closed) alike. amqplib closes a connection's channels before it
 * emits the connection's 'close'; the queue ingress and the event publisher answer a closed
 * channel with `BrokerLink.fail`, and that consequence's reason was logged instead of the
 * cause. Found by test/integration/amqp/broker-restart.test.ts; the fake below replays
 * amqplib 0.10's order of events (lib/connection.js: toClosed closes the channels, then emits
 * 'close' with the cause; a socket error is emitted as 'error' first, a 320 is not).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BrokerLink, type ChannelModel } from '../../src/amqp/broker-link.js';
import { ManualClock } from '../../src/core/clock.js';
import { recordingLog } from '../support/http.js';

/** A connection with one channel, whose 'close' the owner answers with `link.fail`, as queue-ingress.ts does. */
class FakeConnection extends EventEmitter {
  readonly channel = new EventEmitter();
  closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.channel.emit('close');
    this.emit('close');
  }

  /** The broker shuts down: connection.close 320 from the server (not an 'error' in amqplib). */
  serverClose(): void {
    this.closed = true;
    const cause = Object.assign(new Error("Connection closed: 320 (CONNECTION-FORCED) with message \"CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'\""), { code: 320 });
    this.channel.emit('close');
    this.emit('close', cause);
  }

  /** The broker is killed: the socket ends. */
  socketEnds(): void {
    this.closed = true;
    const cause = new Error('Unexpected close');
    this.emit('error', cause);
    this.channel.emit('close');
    this.emit('close', cause);
  }
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

async function upLink(): Promise<{ connection: FakeConnection; reasons: () => unknown[] }> {
  const logs: string[] = [];
  let connection: FakeConnection | undefined;
  const link: BrokerLink = new BrokerLink({
    url: 'amqp://u:pw@mq:5672/', endpoint: 'amqp://mq:5672 vhost /', name: 'smppd test', clock: new ManualClock(), log: recordingLog(logs),
    reconnect: { initialMs: 1_000, maxMs: 8_000, multiplier: 2 }, random: () => 0.5,
    onUp: async (c) => {
      (c as unknown as FakeConnection).channel.on('close', () => link.fail('the channel closed: no reason given'));
    },
    connect: async () => (connection = new FakeConnection()) as unknown as ChannelModel,
  });
  link.start();
  await turns();
  const reasons = () => logs.map((l) => JSON.parse(l) as { event: string; reason?: unknown }).filter((l) => l.event === 'amqp_unavailable').map((l) => l.reason);
  return { connection: connection!, reasons };
}

describe('regression: the reason logged when the broker goes away', () => {
  it('a broker shutdown (320 CONNECTION_FORCED) is logged as such, not as a closed channel', async () => {
    const { connection, reasons } = await upLink();
    connection.serverClose();
    await turns();
    expect(reasons()).toHaveLength(1);
    expect(reasons()[0]).toContain("CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'");
  });

  it('a killed broker (the socket ended) is logged as such, not as a closed channel', async () => {
    const { connection, reasons } = await upLink();
    connection.socketEnds();
    await turns();
    expect(reasons()).toEqual(['Unexpected close']);
  });

  it('a channel that broke on an open connection keeps its own reason', async () => {
    const { connection, reasons } = await upLink();
    connection.channel.emit('close'); // e.g. the server closed the channel: 406 on an ack
    await turns();
    expect(connection.closed).toBe(true);
    expect(reasons()).toEqual(['the channel closed: no reason given']);
  });
});
