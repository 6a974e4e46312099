/**
 * The `amqp` section: the queue ingress (send requests from a durable RabbitMQ queue) and the
 * optional event publisher (status and inbound events to a topic exchange). `url` may hold a
 * password: it is a secret (masked by check-config, never in a message; `urlFile` keeps it out
 * of the file).
 */
import { z } from 'zod';
import { backoff, flag, nonEmpty, positive, seconds, typeMessage, wholeNumber } from './schema-parts.js';

const MIB = 1024 * 1024;
/** AMQP 0-9-1 shortstr: queue and exchange names are at most 255 octets. */
const NAME = /^[A-Za-z0-9_.:/-]{1,255}$/;
const NAME_MESSAGE = 'must be 1–255 of A-Z a-z 0-9 _ . : / -';
/** The same rule as clients[].name. */
const CLIENT_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;

/** A queue or exchange name; `amq.` is the broker's own (AMQP 0-9-1 §4.2.5: declaring one is refused). */
const amqpName = () => z.string({ error: typeMessage('a string') }).regex(NAME, { error: NAME_MESSAGE })
  .refine((n) => !n.startsWith('amq.'), { error: 'must not start with amq. (reserved by the broker)' });
const clientName = () => z.string({ error: typeMessage('a string') }).regex(CLIENT_NAME, { error: 'must be a client name (1–64 letters, digits, _ . @ or -)' });

/** AMQP 0-9-1 shortstr: a user_id property (and so a RabbitMQ user name that can be one) is at most 255 octets. */
const USER_MAX_BYTES = 255;
const rabbitUser = () => z.string({ error: typeMessage('a RabbitMQ user name') })
  .refine((u) => u.length > 0 && Buffer.byteLength(u, 'utf8') <= USER_MAX_BYTES, { error: 'must be a RabbitMQ user name of 1–255 bytes' });

/** Lists each repeated name as `duplicates <key>[<first>]`. */
function noRepeats(names: readonly string[] | undefined, key: string, ctx: z.core.$RefinementCtx): void {
  const seen = new Map<string, number>();
  names?.forEach((name, i) => {
    const first = seen.get(name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [key, i], message: `duplicates ${key}[${first}]` });
    else seen.set(name, i);
  });
}

/** Why `url` is not a broker URL, or null. Never quotes it: it may hold a password. */
export function amqpUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an amqp:// or amqps:// URL, e.g. amqps://user:password@broker:5671/vhost';
  }
  if (parsed.protocol !== 'amqp:' && parsed.protocol !== 'amqps:') return 'must be an amqp:// or amqps:// URL, e.g. amqps://user:password@broker:5671/vhost';
  if (parsed.hostname === '') return 'must name a host';
  if (url.includes('#')) return 'must not have a #fragment';
  return null;
}

/** Status and inbound events published to a topic exchange (routing key `status.<STATUS>` or `inbound`). */
const eventsSchema = z.strictObject({
  /** Required. A durable topic exchange, declared at start. */
  exchange: amqpName(),
  /** The clients whose events are published. Default: every client. Each must name a client. */
  clients: z.array(clientName(), { error: 'must be a list of client names' })
    .min(1, { error: 'must list at least one client; leave clients out for every client' }).optional(),
  /** Publishes awaiting the broker's confirm, per client. Default 64. 1–10000. */
  concurrency: wholeNumber(1, 10_000).default(64),
  /** Seconds a publish may wait for its confirm before it counts as failed (and is retried). Default 10. > 0. */
  timeoutSeconds: seconds().default(10),
  /** Backoff ceilings between attempts of a failed event, seconds, full jitter. Default 1 … 300. */
  retry: backoff(1, 300),
  /** Hours after it was queued that a still-failing event is parked as dead. Default 24. > 0. */
  maxAgeHours: positive(' of hours').default(24),
  /**
   * Default true: an event no queue is bound for comes back (mandatory publish) and counts as
   * failed, so it is retried and in the end parked as dead rather than dropped. false: the
   * broker drops it.
   */
  mandatory: flag().default(true),
}, { error: 'must be a mapping { exchange, clients, concurrency, timeoutSeconds, retry, maxAgeHours, mandatory }' }).superRefine((e, ctx) => noRepeats(e.clients, 'clients', ctx));

/** The queue ingress and the event publisher. */
export const amqpSchema = z.strictObject({
  /** amqp:// or amqps:// URL with credentials and vhost. Exactly one of url and urlFile. A secret. */
  url: z.string({ error: typeMessage('a string') }).superRefine((url, ctx) => {
    const problem = amqpUrlProblem(url);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  }).optional(),
  /** A file holding the URL; one trailing newline is trimmed. Relative to the config file. */
  urlFile: nonEmpty().optional(),
  /** Required. The durable queue send requests are consumed from; declared at start. */
  queue: amqpName(),
  /** An exchange (direct, durable) declared at start and bound to the queue with `routingKey`. Default: none (publish to the queue through the default exchange). */
  exchange: amqpName().optional(),
  /** The binding key of `exchange` to the queue. Default: the queue's name. Only with exchange. */
  routingKey: z.string({ error: typeMessage('a string') }).max(255, { error: 'must be at most 255 characters' }).optional(),
  /** Where refused messages go (fanout, durable, declared at start; the queue's x-dead-letter-exchange). Default `<queue>.dead`. */
  deadLetterExchange: amqpName().optional(),
  /** The durable queue bound to deadLetterExchange. Default `<queue>.dead`. */
  deadLetterQueue: amqpName().optional(),
  /** Unacknowledged messages the broker hands over at once: enough to keep every bind busy while commits run. Default 500. 1–65535. */
  prefetch: wholeNumber(1, 65_535).default(500),
  /** The client a message without a `client` field is sent as. Default: none (such a message is refused). Must be one of `clients`. Not with users. */
  client: clientName().optional(),
  /**
   * The clients a message on this queue may act as (a message naming another is dead-lettered
   * CLIENT_NOT_ALLOWED). Default: `[client]`; with users, the clients users maps to. Each must
   * name a client. One of client, clients and users is required.
   */
  clients: z.array(clientName(), { error: 'must be a list of client names' })
    .min(1, { error: 'must list at least one client' }).optional(),
  /**
   * RabbitMQ user → client. When set, a message acts as the client its `user_id` property maps
   * to (RabbitMQ refuses a publish whose user_id is not the publishing connection's user, so the
   * broker vouches for it); a message without a mapped user_id, or whose `client` field names
   * another client, is dead-lettered CLIENT_NOT_ALLOWED. Default: none (the `client` field or
   * `client` decides). Each client must be one of `clients`; smppd's own user may not be mapped.
   */
  users: z.record(rabbitUser(), clientName(), { error: 'must be a mapping { <RabbitMQ user>: <client> }' })
    .refine((u) => Object.keys(u).length > 0, { error: 'must map at least one user; leave users out to take the client from the message' }).optional(),
  /** Largest message body, bytes. Default 1 MiB. 1 KiB–64 MiB. Larger: refused (PAYLOAD_TOO_LARGE). */
  maxMessageBytes: wholeNumber(1024, 64 * MIB).default(MIB),
  /**
   * Hours a queue message's id is kept to know it again: a message with the same AMQP messageId
   * property (else the same `reference`) of the same client within them is not stored again (its
   * redelivery after a commit whose ack was lost, a publisher's re-send); one with another body is
   * dead-lettered IDEMPOTENCY_KEY_REUSED. 0: off (every message is stored). Default 24. 0–168.
   * Apart from http.idempotencyHours: a reference is the publisher's own and was never required
   * to be unique; a publisher that reuses references needs this off or short without changing
   * what the HTTP API's keys promise.
   */
  dedupHours: wholeNumber(0, 168).default(24),
  /** Delay before a message refused for a passing reason (QUEUE_FULL, a store error) goes back to the queue, seconds, full jitter. Default 1 … 30. */
  retry: backoff(1, 30),
  /** Delay between attempts to reach the broker, seconds, full jitter. Default 1 … 60. */
  reconnect: backoff(1, 60),
  /** Also publish status and inbound events to a topic exchange. Default: none. */
  events: eventsSchema.optional(),
}, { error: 'must be a mapping { url or urlFile, queue, exchange, routingKey, deadLetterExchange, deadLetterQueue, prefetch, client, clients, users, maxMessageBytes, dedupHours, retry, reconnect, events }' })
  .superRefine((a, ctx) => {
    noRepeats(a.clients, 'clients', ctx);
    if (a.client === undefined && a.clients === undefined && a.users === undefined) {
      ctx.addIssue({ code: 'custom', path: ['clients'], message: 'is required: list the clients a queue message may act as (or set client, or users)' });
    }
    if (a.users !== undefined && a.client !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['client'], message: 'give users or client, not both: with users, a message acts as the client its user_id maps to' });
    }
    if (a.client !== undefined && a.clients !== undefined && !a.clients.includes(a.client)) {
      ctx.addIssue({ code: 'custom', path: ['client'], message: 'must be one of amqp.clients' });
    }
    for (const [user, client] of Object.entries(a.users ?? {})) {
      if (a.clients !== undefined && !a.clients.includes(client)) ctx.addIssue({ code: 'custom', path: ['users', user], message: 'must map to one of amqp.clients' });
    }
    if (a.url !== undefined && a.urlFile !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'give url or urlFile, not both' });
    else if (a.url === undefined && a.urlFile === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'one of url or urlFile is required' });
    if (a.routingKey !== undefined && a.exchange === undefined) ctx.addIssue({ code: 'custom', path: ['routingKey'], message: 'is for exchange; set exchange too, or leave routingKey out' });
    const deadLetterExchange = a.deadLetterExchange ?? `${a.queue}.dead`;
    const deadLetterQueue = a.deadLetterQueue ?? `${a.queue}.dead`;
    if (deadLetterQueue === a.queue) ctx.addIssue({ code: 'custom', path: ['deadLetterQueue'], message: 'must differ from queue' });
    if (a.exchange !== undefined && a.exchange === deadLetterExchange) ctx.addIssue({ code: 'custom', path: ['deadLetterExchange'], message: 'must differ from exchange' });
    const events = a.events?.exchange;
    if (events !== undefined && (events === a.exchange || events === deadLetterExchange)) {
      ctx.addIssue({ code: 'custom', path: ['events', 'exchange'], message: `must differ from ${events === a.exchange ? 'exchange' : 'deadLetterExchange'}` });
    }
  });

export type ParsedAmqp = z.output<typeof amqpSchema>;

/** `amqp.events`, resolved. */
export interface AmqpEventsConfig {
  /** A durable topic exchange. */
  exchange: string;
  /** Client names; absent: every client. */
  clients?: string[];
  /** 1–10000. */
  concurrency: number;
  /** Seconds. > 0. */
  timeoutSeconds: number;
  /** Seconds, full jitter. maxSeconds ≥ initialSeconds. */
  retry: { initialSeconds: number; maxSeconds: number };
  /** > 0. */
  maxAgeHours: number;
  mandatory: boolean;
}

/** The `amqp` section as the daemon uses it: the URL read, every default applied. */
export interface AmqpConfig {
  /** amqp:// or amqps://, from `url` or the content of `urlFile`. A secret: masked by maskSecrets; never logged (log `amqpEndpoint(url)`). */
  url: string;
  /** The durable queue consumed. */
  queue: string;
  /** A direct exchange bound to the queue with `routingKey`; absent: none. */
  exchange?: string;
  /** Set when exchange is: the binding key (default the queue's name). */
  routingKey?: string;
  /** Fanout, durable; default `<queue>.dead`. */
  deadLetterExchange: string;
  /** Default `<queue>.dead`. */
  deadLetterQueue: string;
  /** Unacknowledged messages at most. 1–65535. Default 500. */
  prefetch: number;
  /** Default client; absent: a message must name its client (or, with users, its user_id decides). One of `clients`. */
  client?: string;
  /** The clients a message may act as: `clients`, else `[client]`, else the clients of `users`. At least one. */
  clients: string[];
  /** RabbitMQ user → client; absent: the message's `client` field (or `client`) decides. */
  users?: Record<string, string>;
  /** Bytes. Default 1 MiB. */
  maxMessageBytes: number;
  /** Hours a message's id (messageId, else reference) is kept against redeliveries; 0: off. 0–168. Default 24. */
  dedupHours: number;
  /** Requeue delay after a passing failure, seconds, full jitter. Default 1 … 30. */
  retry: { initialSeconds: number; maxSeconds: number };
  /** Broker reconnect delay, seconds, full jitter. Default 1 … 60. */
  reconnect: { initialSeconds: number; maxSeconds: number };
  events?: AmqpEventsConfig;
}

/** The validated section with its URL (inline or read from urlFile) as the daemon uses it. */
export function resolveAmqp(parsed: ParsedAmqp, url: string): AmqpConfig {
  const { url: _url, urlFile: _file, events, exchange, routingKey, client, clients, users, deadLetterExchange, deadLetterQueue, ...rest } = parsed;
  const config: AmqpConfig = {
    url, ...rest,
    clients: clients ?? (client !== undefined ? [client] : [...new Set(Object.values(users ?? {}))]),
    deadLetterExchange: deadLetterExchange ?? `${parsed.queue}.dead`,
    deadLetterQueue: deadLetterQueue ?? `${parsed.queue}.dead`,
  };
  if (exchange !== undefined) {
    config.exchange = exchange;
    config.routingKey = routingKey ?? parsed.queue;
  }
  if (client !== undefined) config.client = client;
  if (users !== undefined) config.users = users;
  if (events !== undefined) {
    const { clients, ...settings } = events;
    config.events = { ...settings, ...(clients !== undefined ? { clients } : {}) };
  }
  return config;
}

/**
 * Problems the schema cannot see: the clients `client`, `clients`, `users` and `events.clients`
 * name must be configured; smppd's own RabbitMQ user may not be in `users`; a URL read from
 * `urlFile` must be a broker URL; and each wait queue's name must fit. `fromFile`: the file's
 * content, when read.
 */
export function amqpProblems(parsed: ParsedAmqp | undefined, clients: readonly string[], fromFile: string | undefined): string[] {
  if (parsed === undefined) return [];
  const problems: string[] = [];
  const known = new Set(clients);
  if (parsed.client !== undefined && !known.has(parsed.client)) problems.push('amqp.client: names no client');
  parsed.clients?.forEach((name, i) => {
    if (!known.has(name)) problems.push(`amqp.clients[${i}]: names no client`);
  });
  for (const [user, client] of Object.entries(parsed.users ?? {})) {
    if (!known.has(client)) problems.push(`amqp.users.${user}: names no client`);
  }
  parsed.events?.clients?.forEach((name, i) => {
    if (!known.has(name)) problems.push(`amqp.events.clients[${i}]: names no client`);
  });
  const url = parsed.url ?? fromFile;
  if (fromFile !== undefined) {
    const problem = amqpUrlProblem(fromFile);
    if (problem !== null) problems.push(`amqp.urlFile: the URL in the file ${problem}`);
  }
  const own = url !== undefined && amqpUrlProblem(url) === null ? amqpUser(url) : undefined;
  if (own !== undefined && parsed.users?.[own] !== undefined) {
    problems.push(`amqp.users.${own}: is smppd's own RabbitMQ user (of amqp.url): a publisher needs a user of its own for its user_id to tell it apart`);
  }
  const allowed = parsed.clients ?? (parsed.client !== undefined ? [parsed.client] : Object.values(parsed.users ?? {}));
  for (const client of new Set(allowed)) {
    const wait = waitQueueName(parsed.queue, client);
    if (Buffer.byteLength(wait, 'utf8') > 255) problems.push(`amqp.queue: the wait queue of client ${client} (${wait}) would be longer than 255 characters; use a shorter queue name`);
    else if (wait === (parsed.deadLetterQueue ?? `${parsed.queue}.dead`)) problems.push(`amqp.deadLetterQueue: must differ from the wait queue of client ${client}`);
  }
  return problems;
}

/**
 * The durable queue where a client's queue messages wait for its rate limit
 * (`clients[].rateLimit`) or for room under its `clients[].maxQueued`: `<queue>.wait.<client>`. The queue ingress declares one for each
 * client of `amqp.clients` and consumes them all.
 */
export function waitQueueName(queue: string, client: string): string {
  return `${queue}.wait.${client}`;
}

/**
 * The RabbitMQ user smppd connects as with `url`, as amqplib takes it from the URL: the decoded
 * user name, or guest when the URL has neither user nor password.
 */
export function amqpUser(url: string): string {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return 'guest';
  try {
    return decodeURIComponent(u.username);
  } catch {
    return u.username;
  }
}

/** What may be logged of a broker URL: `amqps://broker:5671/vhost`, never the user or password. */
export function amqpEndpoint(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port === '' ? (u.protocol === 'amqps:' ? '5671' : '5672') : u.port;
    const vhost = u.pathname.length > 1 ? decodeURIComponent(u.pathname.slice(1)) : '/';
    return `${u.protocol}//${u.hostname}:${port} vhost ${vhost}`;
  } catch {
    return 'the broker';
  }
}
