/**
 * Copies of a consumed message published again, confirmed: to the dead-letter exchange (a
 * refusal) or to a client's wait queue (a message past its client's rate limit). The copy keeps
 * the body and the properties a consumer of the copy may want, with headers of smppd's added.
 */
import { describe, type ConfirmChannel, type MessageProperties, type Options } from '../../amqp/broker-link.js';

/**
 * The publisher's headers beyond this (bytes, as AMQP encodes them) are left off a copy. amqplib
 * encodes a message's headers into one 64 KiB buffer, and past it writes a malformed frame that
 * makes RabbitMQ close the connection (541): the message would come back, and the same happen
 * again. Ours need up to 13 KiB (a refusal's message is at most 2,000 characters, 6 bytes each
 * in JSON at worst).
 */
const HEADERS_MAX_BYTES = 48 * 1024;
/** true on a copy whose publisher's headers were left off (larger than 48 KiB). */
export const HEADERS_DROPPED_HEADER = 'x-smppd-headers-dropped';

type KeptProperties = Pick<Options.Publish, 'contentType' | 'contentEncoding' | 'correlationId' | 'replyTo' | 'messageId' | 'timestamp' | 'type' | 'appId' | 'priority'>;

/**
 * The publish options of a copy: persistent, the original's headers with `headers` added, and
 * its other properties, but not `expiration` (the copy must not expire) nor `userId` (the broker
 * checks it against the publishing connection's user): `userId` is set to `stamp` when given,
 * which must be this connection's user.
 */
export function copyOptions(properties: MessageProperties, headers: Record<string, unknown>, stamp?: string): Options.Publish {
  const theirs: Record<string, unknown> = properties.headers ?? {};
  // amqplib types the decoded properties `any`; AMQP 0-9-1 gives them the types a publish takes.
  const p: KeptProperties = properties;
  return {
    persistent: true,
    headers: encodedBytes(theirs) > HEADERS_MAX_BYTES ? { [HEADERS_DROPPED_HEADER]: true, ...headers } : { ...theirs, ...headers },
    ...(stamp !== undefined ? { userId: stamp } : {}),
    ...(p.contentType !== undefined ? { contentType: p.contentType } : {}),
    ...(p.contentEncoding !== undefined ? { contentEncoding: p.contentEncoding } : {}),
    ...(p.correlationId !== undefined ? { correlationId: p.correlationId } : {}),
    ...(p.replyTo !== undefined ? { replyTo: p.replyTo } : {}),
    ...(p.messageId !== undefined ? { messageId: p.messageId } : {}),
    ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}),
    ...(p.type !== undefined ? { type: p.type } : {}),
    ...(p.appId !== undefined ? { appId: p.appId } : {}),
    ...(p.priority !== undefined ? { priority: p.priority } : {}),
  };
}

/** Publishes with a publisher confirm; null when the broker confirmed it, else why not. `open`: whether the channel may still be used. */
export function publishConfirmed(
  channel: ConfirmChannel, open: boolean, exchange: string, routingKey: string, content: Buffer, options: Options.Publish,
): Promise<string | null> {
  if (!open) return Promise.resolve('the channel is closed');
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: string | null): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    try {
      channel.publish(exchange, routingKey, content, options, (err: unknown) => settle(err ? describe(err) : null));
    } catch (e) {
      settle(describe(e));
    }
  });
}

/** What amqplib's encoding of `value` as a field value takes, bytes, at most (AMQP 0-9-1 §4.2.5.5: a type octet, then the value). */
function encodedBytes(value: unknown): number {
  if (typeof value === 'string') return 5 + Buffer.byteLength(value, 'utf8');
  if (Buffer.isBuffer(value)) return 5 + value.length;
  if (value === null || value === undefined) return 1;
  if (typeof value === 'boolean') return 2;
  if (typeof value !== 'object') return 9; // numbers (at most a double or a long), a Date, a BigInt
  if (value instanceof Date) return 9;
  if (Array.isArray(value)) return 5 + value.reduce((n: number, v) => n + encodedBytes(v), 0);
  return 5 + Object.entries(value).reduce((n, [k, v]) => n + 1 + Buffer.byteLength(k, 'utf8') + encodedBytes(v), 0);
}
