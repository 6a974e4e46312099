/**
 * The daemon's object graph: store, receipt and MO handling, bind pool, dispatcher, acceptor
 * and the HTTP API, built from one validated configuration, and their orderly stop: stop
 * taking work, stop claiming, drain the binds, record every outcome, close the store.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import { WarningThrottle } from '../core/warning-throttle.js';
import type { AdminConfig, ClientConfig, SmppdConfig } from '../config/schema.js';
import type { AdminStatus } from '../dispatch/admin-status.js';
import type { Suspensions } from '../dispatch/suspensions.js';
import { AccountShares } from '../dispatch/account-shares.js';
import { Acceptor } from '../dispatch/accept.js';
import { Deliveries, type DeliveryCounters } from '../dispatch/deliveries.js';
import { Dispatcher, type DispatchCounters } from '../dispatch/dispatcher.js';
import { Failover, type FailoverCounters } from '../dispatch/failover.js';
import { RouteTable } from '../dispatch/route-table.js';
import { RouteWatch, Router, type RoutingCounters } from '../dispatch/router.js';
import { UpstreamAvailability, type UpstreamAvailabilityView } from '../dispatch/upstream-availability.js';
import { InboundRouting } from '../dispatch/inbound-routing.js';
import { ReceiptParking, type ParkingCounters } from '../dispatch/receipt-parking.js';
import { RetentionSweep, type RetentionMetrics } from '../dispatch/retention.js';
import { EventDispatcher, noEventMetrics, type EventClient, type EventMetrics } from '../events/event-dispatcher.js';
import { withAmqpEvents } from '../events/amqp-event-clients.js';
import { eventPublisherFor } from '../events/amqp-event-publisher.js';
import { WebhookClient } from '../events/webhook-client.js';
import { RecordFile } from '../events/record-file.js';
import { RecordWriter, type RecordMetrics } from '../events/record-writer.js';
import { ClientRateLimiter } from '../api/client-rate-limiter.js';
import {
  Authenticator, buildHttpServer, buildMetricsServer, listenerSettings, type HttpListenerMetrics, type HttpMetricsSource,
} from '../ingress/http/server.js';
import { Health } from '../observability/health.js';
import { AmqpIngress, type AmqpIngressMetrics } from '../ingress/amqp/queue-ingress.js';
import type { FastifyInstance } from 'fastify';
import { noEngineMetrics, type EngineMetrics } from '../smpp/engine-metrics.js';
import { Pool } from '../smpp/pool.js';
import { SmscSimulator } from '../simulator/simulator.js';
import { identify, identifyFor } from '../sms/identify.js';
import type { SmppdError } from '../core/errors.js';
import { countStoreErrors } from '../store/count-store-errors.js';
import type { OutboxDepth } from '../store/outbox.js';
import { version } from './version.js';
import { adminParts, SUSPENSIONS_REFRESH_MS } from './admin-api.js';
import { clientMaxQueued, clientWeights, composeSettings, dispatcherUpstream, drainPerSecond, upstreamSettings } from './engine-settings.js';
import { openStore } from './open-store.js';
import { warnIfOpenFilesShort } from './open-files.js';

/** How often the store is asked for incomplete MO messages that waited too long (`Deliveries.flushStaleInbound`). */
const MO_FLUSH_MS = 60_000;

export interface RunningDaemon {
  /** Where the HTTP API listens (the port is the real one when the config said 0). */
  http: { host: string; port: number };
  /** The in-process simulator's port, when the config enables it. */
  simulatorPort?: number;
  pool: Pool;
  /** Events waiting and dead per client (metrics). */
  outboxDepth(): Promise<OutboxDepth[]>;
  /** Queued and inflight parts, parked receipts (metrics). */
  queue(): Promise<{ queued: number; inflight: number; parked: number; lagSeconds: Record<string, number> }>;
  /** Each upstream: whether it can send now (a bind bound), and for how long it has not. */
  upstreams(): UpstreamAvailabilityView[];
  /** Where GET /metrics listens when `metrics.listen` moved it off the HTTP port. */
  metricsHttp?: { host: string; port: number };
  /** SIGHUP: the records file (`records.path`) is opened again for the next records, after logrotate moved it. */
  reopenRecords(): void;
  /** Message records queued and not yet written (metrics). */
  pendingRecords(): Promise<number>;
  /**
   * SIGHUP: new clients, tokens, senders and rate limits for the next requests, with their caps
   * on queued parts (`maxQueued`) and their weights for the next claims; binds, queue and webhooks
   * stay as they are.
   */
  reloadClients(clients: readonly ClientConfig[]): void;
  /** SIGHUP: the admin tokens for the next requests (none: every /admin request is 401); the admin API itself is on or off from the start. */
  reloadAdmins(admin: AdminConfig | undefined): void;
  /** Upstreams an operator suspended. */
  suspensions: Suspensions;
  /** What GET /admin/status answers. */
  adminStatus(): Promise<AdminStatus>;
  health: Health;
  /** Graceful stop; resolves when the store is closed. */
  stop(): Promise<void>;
}

/** What the daemon records and serves (the observability layer's `Metrics`). */
export type DaemonMetrics = EngineMetrics & EventMetrics & DeliveryCounters & DispatchCounters & ParkingCounters & HttpMetricsSource & HttpListenerMetrics
  & AmqpIngressMetrics & RetentionMetrics & RoutingCounters & FailoverCounters & RecordMetrics & {
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  rateLimited(client: string, ingress: 'http' | 'amqp'): void;
  storeError(operation: string): void;
};

export interface DaemonDeps {
  clock: Clock;
  log: Log;
  metrics?: DaemonMetrics;
  onPool?: (pool: Pool) => void;
  /** The store can no longer store anything (its worker thread died): the caller should exit so the service manager restarts it. */
  onFatal?: (error: SmppdError) => void;
}

export async function startDaemon(config: SmppdConfig, deps: DaemonDeps): Promise<RunningDaemon> {
  const { clock, log } = deps;

  let simulator: SmscSimulator | undefined;
  let simulatorPort: number | undefined;
  if (config.simulator?.enabled) {
    const s = config.simulator;
    simulator = new SmscSimulator({
      host: s.host, port: s.port,
      accounts: [{ systemId: s.systemId, password: s.password }],
      behaviour: { receiptRouting: s.receiptRouting, receipts: { delayMs: s.deliveryReceiptDelayMs } },
    }, clock, log.child({ component: 'simulator' }));
    simulatorPort = (await simulator.start()).port;
    log.info({ event: 'simulator_listening', host: s.host, port: simulatorPort }, 'built-in SMSC simulator listening');
  }

  let storeOpen = true;
  const opened = await openStore(config.store, config.records !== undefined, clock, log, (e) => {
    storeOpen = false;
    log.error({ event: 'store_failed', err: e }, 'the store stopped working; nothing more can be accepted or recorded');
    deps.onFatal?.(e);
  });
  const store = deps.metrics ? countStoreErrors(opened, (operation) => deps.metrics?.storeError(operation)) : opened;

  const amqpEvents = eventPublisherFor(config.amqp, { clock, log: log.child({ component: 'amqp-events' }) });
  const webhookClients = config.clients.flatMap((c): EventClient[] => {
    const w = c.webhook;
    if (!w) return [];
    const timeoutMs = w.timeoutSeconds * 1000;
    return [{
      name: c.name,
      sink: new WebhookClient({ url: w.url, timeoutMs, concurrency: w.concurrency, ...(w.secret ? { secret: w.secret } : {}), ...(w.ca ? { ca: w.ca } : {}) },
        { clock, userAgent: `smppd/${version()}` }),
      concurrency: w.concurrency,
      retry: { initialMs: w.retry.initialSeconds * 1000, maxMs: w.retry.maxSeconds * 1000, multiplier: 2 },
      maxAgeMs: w.maxAgeHours * 3_600_000,
      // Claimed events wait for a slot, then take at most the timeout: a lease far beyond both.
      leaseMs: Math.max(60_000, 3 * timeoutMs),
    }];
  });
  const events = new EventDispatcher({
    store, clock, log: log.child({ component: 'webhooks' }), metrics: deps.metrics ?? noEventMetrics,
    // Events go to webhooks, and to the amqp.events exchange for the clients it names (both for a client with both).
    clients: amqpEvents && config.amqp?.events
      ? withAmqpEvents(webhookClients, config.clients.map((c) => c.name), config.amqp.events, amqpEvents)
      : webhookClients,
  });
  const routing = new InboundRouting(
    config.clients.map((c) => ({ name: c.name, hasWebhook: events.has(c.name), ...(c.inboundNumbers ? { inboundNumbers: c.inboundNumbers } : {}) })),
    config.upstreams,
  );

  const upstreams = config.upstreams.map(upstreamSettings);
  // What the SMSCs send that is wrong, once per kind per interval (closed last, at stop).
  const warnings = new WarningThrottle(clock, config.log.warningIntervalSeconds * 1000);
  const parking = new ReceiptParking({
    store, clock, log: log.child({ component: 'receipt-parking' }), warnings, ...(deps.metrics ? { counters: deps.metrics } : {}),
    upstreams: config.upstreams.map((u) => ({ upstream: u.name, max: u.parkedReceipts.max, maxAgeMs: u.parkedReceipts.maxAgeSeconds * 1000 })),
  });
  const deliveries = new Deliveries({
    store, clock, log: log.child({ component: 'deliveries' }), ...(deps.metrics ? { counters: deps.metrics } : {}), routeInbound: (upstream, destination) => routing.route(upstream, destination),
    upstreams: config.upstreams.map((u) => ({ name: u.name, defaultAlphabet: u.defaultAlphabet, receiptIdFormat: u.receiptIdFormat, smscTimeZone: u.smscTimeZone })),
    parking, warnings,
  });
  // Which upstreams can send, from the binds' states: routes choose by it, failover acts on it.
  const availability = new UpstreamAvailability(clock, config.upstreams.map((u) => ({ name: u.name, binds: u.binds, failoverAfterMs: u.failoverAfterSeconds * 1000 })));
  const router = new Router(new RouteTable(config.routes), availability);
  for (const u of config.upstreams) {
    if (u.bindMode === 'receiver' || config.routes.some((r) => r.upstreams.includes(u.name))) continue;
    log.warn({ event: 'upstream_unrouted', upstream: u.name }, 'no route names this upstream: it sends nothing, it only brings in receipts and inbound messages');
  }
  const routeWatch = new RouteWatch(config.routes, availability, log.child({ component: 'routing' }), deps.metrics);
  const pool = new Pool({
    upstreams, clock, log, deliver: deliveries.handle, metrics: deps.metrics ?? noEngineMetrics, warnings,
    onBindState: (upstream, bind, state, detail) => {
      log.debug({ event: 'bind_state', upstream, bind, state, detail }, 'bind state changed');
      availability.bindState(upstream, bind, state);
    },
  });
  deps.onPool?.(pool);
  const dispatcher = new Dispatcher({
    store, pool, clock, log: log.child({ component: 'dispatcher' }), warnings,
    ...(deps.metrics ? { counters: deps.metrics } : {}),
    upstreams: config.upstreams.map((u, i) => dispatcherUpstream(u, upstreams[i])),
    clients: clientWeights(config.clients),
    // A failed-over upstream is handed nothing: its queued messages move to another.
    usable: (upstream) => !availability.failedOver(upstream),
  });
  const unwatchRoutes = availability.onChange((upstream, available) => {
    routeWatch.changed(upstream, available);
    if (available) dispatcher.wake();
  });
  const acceptor = new Acceptor({
    store, clock, maxQueued: config.limits.maxQueued, onAccepted: () => dispatcher.wake(), wantsEvents: (client) => events.has(client),
    admit: (upstream) => dispatcher.admit(upstream),
    clientMaxQueued: clientMaxQueued(config.clients),
    drainPerSecond: drainPerSecond(config.upstreams),
    router, ...(deps.metrics ? { counters: deps.metrics } : {}), log: log.child({ component: 'accept' }),
    upstreams: config.upstreams.map((u) => ({ name: u.name, compose: composeSettings(u) })),
  });
  const failover = new Failover({
    store, pool, availability, router, clock, log: log.child({ component: 'failover' }), warnings,
    compose: (upstream, message) => acceptor.composeFor(upstream, message),
    upstreams: config.upstreams.map((u) => u.name),
    onMoved: () => dispatcher.wake(),
    ...(deps.metrics ? { counters: deps.metrics } : {}),
  });
  const identifyRules = new Map(config.upstreams.map((u) => [u.name, {
    defaultAlphabet: u.defaultAlphabet, nationalShift: u.nationalLanguageShift, longMessages: u.longMessages, udhReferenceBits: u.udhReference,
  }]));
  const health = new Health(() => {
    const binds = pool.stats();
    return {
      storeOpen,
      upstreams: config.upstreams.map((u) => ({
        name: u.name, binds: u.binds, bound: binds.filter((b) => b.upstream === u.name && b.state === 'bound').length, suspended: availability.isSuspended(u.name),
      })),
      // No route (only receivers): every upstream must have a bind, as before routes existed.
      ...(config.routes.length > 0 ? { routes: config.routes } : {}),
    };
  });
  const authenticator = new Authenticator(config.clients);
  let clientNames = config.clients.map((c) => c.name);
  const admin = adminParts({ config, store, pool, availability, failover, authenticator, clock, log, clients: () => clientNames });
  const accountShares = new AccountShares({
    liveInstances: store.liveInstances?.bind(store), setInstances: (u, n) => pool.setInstances(u, n),
    upstreams: config.upstreams.filter((u) => u.accountRate > 0).map((u) => u.name),
    clock, log: log.child({ component: 'pacing' }), everyMs: SUSPENSIONS_REFRESH_MS,
  });
  // One bucket per limited client, shared by both ingresses.
  const rateLimiter = new ClientRateLimiter(config.clients, clock);
  const metricsListen = config.metrics?.listen;
  const amqpIngress = config.amqp
    ? new AmqpIngress({
      config: config.amqp, acceptor, keys: store, clients: config.clients, rateLimiter, clock, log: log.child({ component: 'amqp' }), ...(deps.metrics ? { metrics: deps.metrics } : {}),
    })
    : undefined;
  const http = buildHttpServer({
    acceptor, store, clock, log, // the server names its own component
    identify: (text, client, destination) => {
      // The upstream a send would take now; with no route for it, the text as the defaults see it.
      const choice = router.explain(destination ?? '', client);
      const rules = choice ? identifyRules.get(choice.upstream) : undefined;
      return rules ? identifyFor(text, rules) : identify(text);
    },
    authenticator, rateLimiter, health,
    ...(deps.metrics && !metricsListen ? { metrics: deps.metrics } : {}),
    ...(deps.metrics ? { onRequestDone: deps.metrics.httpRequest.bind(deps.metrics) } : {}),
    ...(deps.metrics ? { onRateLimited: (client: string) => deps.metrics?.rateLimited(client, 'http') } : {}),
    events: { hasWebhook: (client) => events.has(client), wake: () => events.wake() },
    clients: config.clients,
    limits: {
      maxBodyBytes: config.http.maxBodyBytes, maxUploadBytes: config.http.maxUploadBytes, maxBulkNumbers: config.http.maxBulkNumbers,
      maxConcurrentUploads: config.http.maxConcurrentUploads, maxResendDays: config.http.maxResendDays,
      idempotencyHours: config.http.idempotencyHours,
    },
    listener: listenerSettings(config.http),
    ...(deps.metrics ? { listenerMetrics: deps.metrics } : {}),
    ...(admin.http ? { admin: admin.http } : {}),
    ...(config.mcp ? { mcp: { version: version() } } : {}),
  });
  warnIfOpenFilesShort(config, log);
  const records = config.records && new RecordWriter({
    store, file: new RecordFile(config.records.path), clock, log: log.child({ component: 'records' }), warnings, ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });

  // store.retentionDays 0 keeps everything.
  const retention = config.store.retentionDays > 0
    ? new RetentionSweep({
      store, clock, log: log.child({ component: 'retention' }), retentionDays: config.store.retentionDays,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    })
    : undefined;

  // Before anything is sent: a suspended upstream takes no message from the first claim on.
  await admin.suspensions.load();
  pool.start();
  await dispatcher.start();
  failover.start();
  admin.suspensions.start();
  accountShares.start();
  parking.start();
  retention?.start();
  events.start();
  records?.start();
  // Neither waits for the broker: both connect, and reconnect, in the background.
  amqpEvents?.start();
  amqpIngress?.start();
  await http.listen({ host: config.http.host, port: config.http.port });
  const address = http.server.address();
  const httpPort = typeof address === 'object' && address !== null ? address.port : config.http.port;
  log.info({ event: 'http_listening', host: config.http.host, port: httpPort, tls: config.http.tls !== undefined, mcp: config.mcp !== undefined }, 'HTTP API listening');
  let metricsServer: FastifyInstance | undefined;
  let metricsHttp: { host: string; port: number } | undefined;
  if (deps.metrics && metricsListen) {
    metricsServer = buildMetricsServer(deps.metrics, listenerSettings(config.http), clock, log.child({ component: 'metrics' }));
    await metricsServer.listen({ host: metricsListen.host, port: metricsListen.port });
    const a = metricsServer.server.address();
    metricsHttp = { host: metricsListen.host, port: typeof a === 'object' && a !== null ? a.port : metricsListen.port };
    log.info({ event: 'metrics_listening', ...metricsHttp }, 'metrics listening');
  }

  let stopping: Promise<void> | undefined;
  const moFlush = new RepeatingTask({
    clock, everyMs: MO_FLUSH_MS, run: () => deliveries.flushStaleInbound(),
    onError: (e) => log.error({ event: 'store_error', err: e }, 'storing incomplete MO messages failed'),
  });
  moFlush.start(MO_FLUSH_MS);

  return {
    http: { host: config.http.host, port: httpPort },
    ...(simulatorPort !== undefined ? { simulatorPort } : {}),
    pool,
    outboxDepth: () => store.outboxDepth(),
    queue: async () => {
      const now = clock.wallNow();
      const [c, ...since] = await Promise.all([store.counts(), ...config.upstreams.map((u) => store.readySince(u.name, now))]);
      const lagSeconds = Object.fromEntries(config.upstreams.map((u, i) => [u.name, since[i] == null ? 0 : Math.max(0, now - since[i]) / 1000]));
      return { queued: c.queued, inflight: c.inflight, parked: c.parked, lagSeconds };
    },
    upstreams: () => availability.view(),
    ...(metricsHttp ? { metricsHttp } : {}),
    reopenRecords: () => records?.reopen(),
    pendingRecords: () => store.pendingRecords(),
    health,
    suspensions: admin.suspensions,
    adminStatus: () => admin.status(),
    reloadAdmins(next) {
      admin.http?.auth.replace(next?.tokens ?? []);
      log.info({ event: 'admins_reloaded', admins: next?.tokens.map((t) => t.name) ?? [] }, 'admin tokens reloaded');
    },
    reloadClients(clients) {
      authenticator.replace(clients);
      rateLimiter.replace(clients);
      amqpIngress?.replaceClients(clients);
      // Caps and weights from the next request and the next claim on; what is queued stays.
      acceptor.setClientMaxQueued(clientMaxQueued(clients));
      dispatcher.setClients(clientWeights(clients));
      clientNames = clients.map((c) => c.name);
      log.info({ event: 'clients_reloaded', clients: clients.map((c) => c.name) }, 'clients, tokens and rate limits reloaded');
    },
    stop() {
      stopping ??= (async () => {
        health.markStopping();
        const moFlushed = moFlush.stop();
        // No more sweeps; the store call under way (if any) is waited for before the store closes,
        // not here, so a slow one does not keep HTTP taking requests.
        const retentionStopped = retention?.stop();
        const parkingStopped = parking.stop();
        // No new work: HTTP first (in-flight requests finish and commit), then no new claims.
        await http.close();
        // The queue next: sends under way commit and are acked, held messages go back to the queue.
        await amqpIngress?.stop();
        await failover.stop();
        await admin.suspensions.stop();
        await accountShares.stop();
        // The binds about to go down by our own stop are no route failing over.
        unwatchRoutes();
        const settled = dispatcher.stop();
        await pool.stop(config.shutdown.drainSeconds * 1000);
        await settled;
        // Last: receipts that arrived while the binds drained have their events queued by now.
        await events.stop();
        // The records of what the drained binds and the events settled last, written before the store closes.
        await records?.stop();
        await amqpEvents?.stop();
        await retentionStopped;
        await moFlushed;
        await parkingStopped;
        warnings.close();
        storeOpen = false;
        await store.close();
        await metricsServer?.close();
        await simulator?.stop();
      })();
      return stopping;
    },
  };
}
