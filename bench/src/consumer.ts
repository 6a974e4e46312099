/**
 * The floor consumer of the scale-out benchmark (`main.ts consumer`, forked by the bench):
 * it consumes the send queue as the daemon's queue ingress does (the same declaration, confirm
 * channel and prefetch, acks gathered by the same `ChannelAcks`, here for `ACK_GATHER_MS`) and
 * does nothing with a request but read it (`JSON.parse`). What RabbitMQ and such consumers cost at the benchmark's
 * load is the part of the machine that no change to smppd's store or dispatch can give back.
 *
 * The broker's URL comes in SMPPD_BENCH_AMQP_URL, never in the arguments (a process's arguments
 * are readable by anyone on the host). Over the IPC channel of `fork`: it sends `{ ready: true }`
 * once it consumes and answers `'report'` with a `ConsumerReport`; SIGTERM closes the connection
 * and exits 0.
 */
import amqplib, { type ConsumeMessage } from 'amqplib';
import { parseArgs } from 'node:util';
import { ChannelAcks, declareSendQueue } from '../../src/ingress/amqp/index.js';

export const CONSUMER_URL_ENV = 'SMPPD_BENCH_AMQP_URL';

/**
 * Acks gathered this long into one `basic.ack` (the daemon's ingress sends its acks at the end of
 * the turn that committed them): fewer ack frames a message than the daemon sends, so RabbitMQ's
 * floor errs low, not high.
 */
const ACK_GATHER_MS = 10;

export interface ConsumerReport {
  consumed: number;
  /** Requests that were not JSON (none, from the bench's publisher). */
  unreadable: number;
  /** Wall-clock ms (epoch) of the last delivery; NaN before the first. */
  lastAt: number;
  /** basic.ack frames sent (`ChannelAcks`: one for each run of deliveries settled within ACK_GATHER_MS). */
  ackFrames: number;
  /** This process's CPU so far, µs (its /proc entry is gone once it has exited; this is not). */
  cpuUs: number;
}

export async function runBenchConsumer(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { queue: { type: 'string' }, prefetch: { type: 'string', default: '500' } } });
  const url = process.env[CONSUMER_URL_ENV];
  const queue = values.queue;
  const prefetch = Number(values.prefetch);
  if (url === undefined || queue === undefined || !Number.isInteger(prefetch) || prefetch < 1 || process.send === undefined) {
    process.stderr.write(`bench consumer: started by the bench (fork, with ${CONSUMER_URL_ENV}, --queue and --prefetch)\n`);
    return 2;
  }
  const connection = await amqplib.connect(url, { clientProperties: { connection_name: 'smppd bench floor consumer' } });
  const channel = await connection.createConfirmChannel();
  await declareSendQueue(channel, { queue, deadLetterExchange: `${queue}.dead`, deadLetterQueue: `${queue}.dead` });
  await channel.prefetch(prefetch);
  const acks = new ChannelAcks<ConsumeMessage>((m, multiple) => channel.ack(m, multiple), (m) => m.fields.deliveryTag, (flush) => { setTimeout(flush, ACK_GATHER_MS); });
  const report: Omit<ConsumerReport, 'ackFrames' | 'cpuUs'> = { consumed: 0, unreadable: 0, lastAt: NaN };
  await channel.consume(queue, (m) => {
    if (m === null) return;
    acks.delivered(m);
    try {
      JSON.parse(m.content.toString('utf8'));
    } catch {
      report.unreadable++;
    }
    report.consumed++;
    report.lastAt = Date.now();
    acks.ack(m);
  }, { noAck: false });
  process.on('message', (msg) => {
    if (msg !== 'report') return;
    const cpu = process.cpuUsage();
    process.send!({ ...report, ackFrames: acks.frames, cpuUs: cpu.user + cpu.system } satisfies ConsumerReport);
  });
  // SIGTERM from the bench; or the bench gone without its clean-up (its IPC channel closed): never outlive it.
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('disconnect', () => resolve());
  });
  process.send({ ready: true });
  await stopped;
  acks.flush();
  await connection.close().catch(() => {});
  if (process.connected) process.disconnect();
  return 0;
}
