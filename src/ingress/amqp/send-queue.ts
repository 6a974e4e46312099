/**
 * What the queue ingress declares on the broker, and the headers it writes: the send queue, its
 * dead-letter exchange and queue, and one wait queue per client the queue may act as.
 */
import { waitQueueName, type AmqpConfig } from '../../config/amqp-schema.js';
import type { Channel } from '../../amqp/broker-link.js';

/** The headers a refused message carries on the dead-letter exchange. */
export const ERROR_HEADER = 'x-smppd-error';
export const ERROR_CODE_HEADER = 'x-smppd-error-code';
/** On a message set aside in a wait queue: the client it acts as. */
export const CLIENT_HEADER = 'x-smppd-client';
/**
 * On a message set aside in a wait queue: when smppd first read it (wall ms), so that a schedule
 * that was in the future then is not refused as past when the message comes back.
 */
export const RECEIVED_AT_HEADER = 'x-smppd-received-at';

/** The names `declareSendQueue` declares. */
export type SendQueueNames = Pick<AmqpConfig, 'queue' | 'exchange' | 'routingKey' | 'deadLetterExchange' | 'deadLetterQueue'>;

/**
 * The consumed queue as the ingress declares it: durable, dead-lettering to a durable fanout
 * exchange with its own durable queue, and bound to `exchange` when there is one. The scale-out
 * benchmark's floor consumer declares the same, so that the broker does the same work for it.
 */
export async function declareSendQueue(channel: Channel, c: SendQueueNames): Promise<void> {
  await channel.assertExchange(c.deadLetterExchange, 'fanout', { durable: true });
  await channel.assertQueue(c.deadLetterQueue, { durable: true });
  await channel.bindQueue(c.deadLetterQueue, c.deadLetterExchange, '');
  await channel.assertQueue(c.queue, { durable: true, deadLetterExchange: c.deadLetterExchange });
  if (c.exchange !== undefined) {
    await channel.assertExchange(c.exchange, 'direct', { durable: true });
    await channel.bindQueue(c.queue, c.exchange, c.routingKey ?? c.queue);
  }
}

/**
 * A client's wait queue (`<queue>.wait.<client>`): durable, and like the send queue, dead-lettering
 * to the dead-letter exchange. Returns its name. Published to through the default exchange.
 */
export async function declareWaitQueue(channel: Channel, c: Pick<AmqpConfig, 'queue' | 'deadLetterExchange'>, client: string): Promise<string> {
  const name = waitQueueName(c.queue, client);
  await channel.assertQueue(name, { durable: true, deadLetterExchange: c.deadLetterExchange });
  return name;
}
