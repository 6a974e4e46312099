/**
 * The event dispatcher's clients with the event exchange added (`amqp.events`): a client it
 * lists (every client when it lists none) has its events published there too: alone when the
 * client has no webhook, beside the webhook (FanOutSink) when it has one.
 */
import type { AmqpEventsConfig } from '../config/amqp-schema.js';
import type { AmqpEventPublisher } from './amqp-event-publisher.js';
import type { EventClient } from './event-dispatcher.js';
import { FanOutSink } from './fan-out-sink.js';

/**
 * `webhooks`: the clients with a webhook, as the daemon builds them. `clients`: every client
 * name of the config. Returns the list to give the EventDispatcher.
 */
export function withAmqpEvents(webhooks: readonly EventClient[], clients: readonly string[], events: AmqpEventsConfig, publisher: AmqpEventPublisher): EventClient[] {
  const publishing = new Set(events.clients ?? clients);
  const timeoutMs = events.timeoutSeconds * 1000;
  // Claimed events wait for a slot, then take at most the timeout: a lease far beyond both.
  const leaseMs = Math.max(60_000, 3 * timeoutMs);
  const result: EventClient[] = webhooks.map((w) => (publishing.has(w.name)
    ? { ...w, sink: new FanOutSink([w.sink, publisher.sink(w.name)]), leaseMs: Math.max(w.leaseMs, leaseMs) }
    : w));
  const hooked = new Set(webhooks.map((w) => w.name));
  for (const name of clients) {
    if (!publishing.has(name) || hooked.has(name)) continue;
    result.push({
      name,
      sink: publisher.sink(name),
      concurrency: events.concurrency,
      retry: { initialMs: events.retry.initialSeconds * 1000, maxMs: events.retry.maxSeconds * 1000, multiplier: 2 },
      maxAgeMs: events.maxAgeHours * 3_600_000,
      leaseMs,
    });
  }
  return result;
}
