/**
 * The queue ingress under test against a real RabbitMQ: the real Acceptor over a SQLite store
 * the test can hold, fail or fill; smppd's connection through a BrokerProxy the test can cut; a
 * BrokerView to publish and look at the queues; queues of the test's own, deleted after it.
 */
import type { Connect } from '../../../src/amqp/broker-link.js';
import type { ApiClient } from '../../../src/api/auth.js';
import type { ClientRateLimiter } from '../../../src/api/client-rate-limiter.js';
import type { AmqpConfig } from '../../../src/config/amqp-schema.js';
import { SystemClock } from '../../../src/core/clock.js';
import { Acceptor } from '../../../src/dispatch/accept.js';
import { AmqpIngress } from '../../../src/ingress/amqp/queue-ingress.js';
import type { AcceptRequest } from '../../../src/store/intake.js';
import { CLIENTS, COMPOSE, openTestStore, recordingLog } from '../../support/http.js';
import { BrokerProxy, BrokerView, uniqueName } from './broker.js';

export const VALID = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' };

export interface HarnessOptions {
  maxQueued?: number;
  /** clients[].maxQueued by client name. */
  clientMaxQueued?: Record<string, number>;
  prefetch?: number;
  /** Start with the proxy refusing connections (the broker is away). */
  brokerAway?: boolean;
  /** Do not start the ingress (the test declares something first). */
  noStart?: boolean;
  /** Bind the queue to an exchange of its own with routing key `send`. */
  exchange?: boolean;
  /** In place of CLIENTS (rate limits, say). */
  clients?: ApiClient[];
  /** amqp.clients (default every client), amqp.client (default app, unless users is given) and amqp.users. */
  access?: Partial<Pick<AmqpConfig, 'clients' | 'client' | 'users'>>;
  rateLimiter?: ClientRateLimiter;
  /** Opens smppd's broker connection (default amqplib's, to the proxy). */
  connect?: Connect;
  /** amqp.maxMessageBytes. Default 64 KiB. */
  maxMessageBytes?: number;
  /** amqp.dedupHours. Default 24. */
  dedupHours?: number;
}

/** One commit of the store, as the harness saw it: the message's client and campaignName, and when (ms). */
export interface Commit {
  client: string;
  campaignName: string;
  at: number;
}

export type Cleanups = Array<() => Promise<void> | void>;

export async function ingressHarness(cleanups: Cleanups, o: HarnessOptions = {}) {
  const { store, cleanup } = await openTestStore();
  cleanups.push(cleanup);
  const proxy = await BrokerProxy.start();
  cleanups.push(() => proxy.close());
  if (o.brokerAway) proxy.cut();
  const view = await BrokerView.open();
  cleanups.push(() => view.close());
  const queue = view.ownQueue(uniqueName('in'));
  const deadQueue = view.ownQueue(`${queue}.dead`);
  view.ownExchange(`${queue}.dead`);
  const clients = o.clients ?? CLIENTS;
  const waitQueue = (client: string): string => `${queue}.wait.${client}`;
  for (const c of clients) view.ownQueue(waitQueue(c.name));

  // The store, as the test drives it: accept waits while the gate is held, throws while failures
  // are set, and records the campaignName of each commit; queueDepth answers `depth` when set,
  // all of it client app's.
  const gate = { held: false, waiters: [] as Array<() => void>, failures: 0, calls: 0, depth: null as number | null, depthReads: 0 };
  const commits: string[] = [];
  const committed: Commit[] = [];
  const accept = store.accept.bind(store);
  store.accept = async (r: AcceptRequest) => {
    gate.calls++;
    if (gate.held) await new Promise<void>((resume) => gate.waiters.push(resume));
    if (gate.failures > 0) {
      gate.failures--;
      throw new Error('SQLITE_BUSY: database is locked');
    }
    const accepted = await accept(r);
    for (const m of r.messages) {
      commits.push(m.campaignName ?? '');
      committed.push({ client: m.client, campaignName: m.campaignName ?? '', at: Date.now() });
    }
    return accepted;
  };
  const queueDepth = store.queueDepth.bind(store);
  store.queueDepth = async () => {
    gate.depthReads++;
    return gate.depth === null ? queueDepth() : { queued: gate.depth, byClient: gate.depth > 0 ? [{ client: 'app', queued: gate.depth }] : [] };
  };
  const release = (): void => {
    gate.held = false;
    for (const resume of gate.waiters.splice(0)) resume();
  };

  const clock = new SystemClock();
  const acceptor = new Acceptor({
    store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: o.maxQueued ?? 1_000_000,
    clientMaxQueued: new Map(Object.entries(o.clientMaxQueued ?? {})),
  });
  const access = o.access ?? {};
  const defaultClient = 'client' in access ? access.client : access.users === undefined ? 'app' : undefined;
  const config: AmqpConfig = {
    url: proxy.url, queue, deadLetterExchange: `${queue}.dead`, deadLetterQueue: deadQueue, prefetch: o.prefetch ?? 500,
    clients: access.clients ?? clients.map((c) => c.name),
    ...(defaultClient !== undefined ? { client: defaultClient } : {}),
    ...(access.users !== undefined ? { users: access.users } : {}),
    maxMessageBytes: o.maxMessageBytes ?? 64 * 1024, dedupHours: o.dedupHours ?? 24, retry: { initialSeconds: 0.05, maxSeconds: 0.2 }, reconnect: { initialSeconds: 0.05, maxSeconds: 0.3 },
    ...(o.exchange ? { exchange: view.ownExchange(uniqueName('x')), routingKey: 'send' } : {}),
  };
  const logs: string[] = [];
  const settled = { accepted: 0, dead: 0, requeued: 0, waiting: 0, duplicate: 0 };
  const rateLimited: string[] = [];
  /** Another ingress on the same queue and store (a restart), started; stopped after the test. */
  const newIngress = (withClients: ApiClient[] = clients, rateLimiter = o.rateLimiter): AmqpIngress => {
    const ingress = new AmqpIngress({
      config, acceptor, keys: store, clients: withClients, clock, log: recordingLog(logs), ...(rateLimiter ? { rateLimiter } : {}), ...(o.connect ? { connect: o.connect } : {}),
      metrics: { amqpMessage: (result) => { settled[result]++; }, amqpConnected: () => {}, rateLimited: (client) => { rateLimited.push(client); } },
    });
    cleanups.push(() => ingress.stop());
    return ingress;
  };
  const ingress = newIngress();
  if (!o.noStart) ingress.start();
  const events = (name: string): number => logs.filter((l) => (JSON.parse(l) as { event?: string }).event === name).length;
  return {
    store, proxy, view, queue, deadQueue, waitQueue, gate, release, commits, committed, ingress, newIngress, logs, settled, rateLimited, events, config,
  };
}

export type IngressHarness = Awaited<ReturnType<typeof ingressHarness>>;
