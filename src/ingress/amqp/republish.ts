/**
 * Copies of a consumed message published again, confirmed: to the dead-letter exchange (a
 * refusal) or to a client's wait queue (a message past its client's rate limit). The copy keeps
 * the body and the properties a consumer of the copy may want, with headers of smppd's added.
 */
import { describe, type ConfirmChannel, type MessageProperties, type Options } from './broker-link.js';

/**
 * The publisher's headers beyond this (JSON bytes, an over-estimate of their AMQP size) are left
 * off a copy: AMQP 0-9-1 carries all properties in one frame (RabbitMQ's frame_max, 128 KiB by
 * default), and a copy whose headers no longer fit would make the broker close the connection,
 * the message come back, and the same happen again.
 */
const HEADERS_MAX_BYTES = 64 * 1024;
/** true on a copy whose publisher's headers were left off (larger than 64 KiB). */
export const HEADERS_DROPPED_HEADER = 'x-smppd-headers-dropped';

/**
 * The publish options of a copy: persistent, the original's headers with `headers` added, and
 * its other properties, but not `expiration` (the copy must not expire) nor `userId` (the broker
 * checks it against the publishing connection's user): `userId` is set to `stamp` when given,
 * which must be this connection's user.
 */
export function copyOptions(p: MessageProperties, headers: Record<string, unknown>, stamp?: string): Options.Publish {
  const theirs: Record<string, unknown> = p.headers ?? {};
  return {
    persistent: true,
    headers: jsonBytes(theirs) > HEADERS_MAX_BYTES ? { [HEADERS_DROPPED_HEADER]: true, ...headers } : { ...theirs, ...headers },
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

/** The size of `value` as JSON, bytes; Infinity when it has none (a BigInt). */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value), 'utf8');
  } catch {
    return Infinity;
  }
}
