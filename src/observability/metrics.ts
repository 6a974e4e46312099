import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { registerBindMetrics } from './bind-metrics.js';
import type { AccountReading, BindReading, OutboxReading, QueueReading } from './metric-readings.js';

export type { BindReading, OutboxReading, QueueReading } from './metric-readings.js';


/**
 * Every metric smppd exports is declared here, on one registry per process (no globals: main
 * builds it). Method names match the engine's `EngineMetrics`, which this class satisfies.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #responses: Counter<'upstream' | 'status'>;
  readonly #latency: Histogram<'upstream'>;
  readonly #uncertain: Counter<'upstream' | 'cause'>;
  readonly #late: Counter<'upstream'>;
  readonly #duplicates: Counter<'upstream'>;
  readonly #retries: Counter<'upstream' | 'status'>;
  readonly #throttled: Counter<'upstream' | 'bind'>;
  readonly #reconnects: Counter<'upstream' | 'bind'>;
  readonly #deliveriesThrottled: Counter<'upstream'>;
  readonly #webhookAttempts: Counter<'client' | 'result'>;
  readonly #webhookRequest: Histogram<'client'>;
  readonly #eventLatency: Histogram<'client' | 'kind'>;
  readonly #eventsDead: Counter<'client'>;
  readonly #eventsSuperseded: Counter;
  readonly #httpRequests: Counter<'route' | 'method' | 'status'>;
  readonly #httpSeconds: Histogram<'route'>;
  readonly #httpRefused: Counter<'reason'>;
  readonly #httpConnections: Gauge;
  readonly #receipts: Counter<'upstream' | 'result'>;
  readonly #parkedDropped: Counter<'upstream' | 'reason'>;
  readonly #inbound: Counter<'upstream' | 'result'>;
  readonly #dispatched: Counter<'upstream' | 'via'>;
  readonly #amqpMessages: Counter<'result'>;
  readonly #rateLimited: Counter<'client' | 'ingress'>;
  readonly #amqpConnected: Gauge;
  readonly #pruned: Counter<'kind'>;
  readonly #routed: Counter<'route' | 'upstream'>;
  readonly #routeFailovers: Counter<'route' | 'from' | 'to'>;
  readonly #failoverMoved: Counter<'from' | 'to'>;
  readonly #storeErrors: Counter<'operation'>;
  readonly #recordsWritten: Counter;
  readonly #recordWriteErrors: Counter;

  constructor(
    readBinds: () => BindReading[],
    options: {
      processMetrics?: boolean; readOutbox?: () => Promise<OutboxReading[]>; readQueue?: () => Promise<QueueReading>;
      /** Each upstream: available while a bind of it is bound (and not suspended); suspended by an operator. */
      readUpstreams?: () => ReadonlyArray<{ name: string; available: boolean; suspended?: boolean }>;
      /** Message records queued and not yet written (every instance's, on a shared store). */
      readRecords?: () => Promise<number>;
      /** Each upstream with an `accountRate`: its pacing on this instance. */
      readAccounts?: () => AccountReading[];
    } = {},
  ) {
    const r = this.registry;
    this.#routed = new Counter({ name: 'smppd_route_sends_total', help: 'messages accepted, by the route they took and the upstream it chose', labelNames: ['route', 'upstream'], registers: [r] });
    this.#routeFailovers = new Counter({
      name: 'smppd_route_failovers_total', help: 'times a route\'s sends moved from an upstream that became unavailable to another (to="none": none was left)',
      labelNames: ['route', 'from', 'to'], registers: [r],
    });
    this.#failoverMoved = new Counter({
      name: 'smppd_failover_moved_total', help: 'queued messages moved from an upstream unavailable for its failoverAfterSeconds to the next upstream of their route',
      labelNames: ['from', 'to'], registers: [r],
    });
    const readUpstreams = options.readUpstreams;
    if (readUpstreams) {
      new Gauge({
        name: 'smppd_upstream_available', help: '1 while at least one bind of the upstream is bound and it is not suspended (it takes sends), else 0', labelNames: ['upstream'], registers: [r],
        collect() {
          this.reset();
          for (const u of readUpstreams()) this.set({ upstream: u.name }, u.available ? 1 : 0);
        },
      });
      new Gauge({
        name: 'smppd_upstream_suspended', help: '1 while an operator has the upstream suspended (admin API): no new sends go to it', labelNames: ['upstream'], registers: [r],
        collect() {
          this.reset();
          for (const u of readUpstreams()) this.set({ upstream: u.name }, u.suspended === true ? 1 : 0);
        },
      });
    }
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: r, prefix: 'smppd_' });
    this.#responses = new Counter({ name: 'smppd_submit_responses_total', help: 'submit_sm answers by command_status name', labelNames: ['upstream', 'status'], registers: [r] });
    this.#latency = new Histogram({
      name: 'smppd_submit_latency_seconds', help: 'submit_sm write to response', labelNames: ['upstream'], registers: [r],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.#uncertain = new Counter({ name: 'smppd_uncertain_outcomes_total', help: 'submit_sm with no response in time or lost with the connection', labelNames: ['upstream', 'cause'], registers: [r] });
    this.#late = new Counter({ name: 'smppd_late_responses_total', help: 'responses that arrived after their request timed out', labelNames: ['upstream'], registers: [r] });
    this.#duplicates = new Counter({ name: 'smppd_duplicate_submits_total', help: 'parts accepted twice because an uncertain resend and its first attempt both went through', labelNames: ['upstream'], registers: [r] });
    this.#retries = new Counter({ name: 'smppd_submit_retries_total', help: 'parts queued again for a retryable command_status', labelNames: ['upstream', 'status'], registers: [r] });
    this.#throttled = new Counter({ name: 'smppd_throttle_episodes_total', help: 'throttle answers that started a measurement of the rate the SMSC accepts, per bind (bind="account": the upstream\'s accountRate)', labelNames: ['upstream', 'bind'], registers: [r] });
    this.#reconnects = new Counter({ name: 'smppd_bind_reconnects_total', help: 'times a bind went down and will reconnect', labelNames: ['upstream', 'bind'], registers: [r] });
    this.#deliveriesThrottled = new Counter({
      name: 'smppd_deliveries_throttled_total',
      help: 'deliver_sm and data_sm answered ESME_RTHROTTLED because their bind was storing maxPendingDeliveries already (the SMSC delivers them again later)',
      labelNames: ['upstream'], registers: [r],
    });

    this.#webhookAttempts = new Counter({ name: 'smppd_webhook_attempts_total', help: 'webhook POSTs by result: ok, status (not 2xx), timeout, network, tls', labelNames: ['client', 'result'], registers: [r] });
    this.#webhookRequest = new Histogram({
      name: 'smppd_webhook_request_seconds', help: 'one webhook POST, sent to answered', labelNames: ['client'], registers: [r],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    });
    this.#eventLatency = new Histogram({
      name: 'smppd_event_delivery_seconds', help: 'status change or inbound message to its webhook\'s acknowledgement (retries included)', labelNames: ['client', 'kind'], registers: [r],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
    });
    this.#eventsDead = new Counter({ name: 'smppd_events_dead_total', help: 'events parked as dead after failing for maxAgeHours', labelNames: ['client'], registers: [r] });
    this.#eventsSuperseded = new Counter({ name: 'smppd_events_superseded_total', help: 'dead events dropped because a later event of their message was delivered', registers: [r] });
    this.#httpRequests = new Counter({ name: 'smppd_http_requests_total', help: 'HTTP requests by route pattern, method and status', labelNames: ['route', 'method', 'status'], registers: [r] });
    this.#httpSeconds = new Histogram({
      name: 'smppd_http_request_seconds', help: 'HTTP request to response, by route pattern', labelNames: ['route'], registers: [r],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
    });
    this.#httpRefused = new Counter({
      name: 'smppd_http_refused_total',
      help: 'HTTP requests and connections refused before a route ran, by reason: the errorCode answered (BAD_REQUEST, HEADERS_TOO_LARGE, REQUEST_TIMEOUT, '
        + 'EXPECTATION_FAILED, PAYLOAD_TOO_LARGE, SHUTTING_DOWN), MAX_CONNECTIONS for a connection closed at http.maxConnections, '
        + 'MAX_CONNECTIONS_PER_ADDRESS for one closed at http.maxConnectionsPerAddress, '
        + 'RESPONSE_NOT_TAKEN for one closed because its client did not read a response in time, '
        + 'or PIPELINED_TOO_DEEP for one closed for more than 16 requests pipelined behind the one being answered',
      labelNames: ['reason'], registers: [r],
    });
    this.#httpConnections = new Gauge({ name: 'smppd_http_connections', help: 'open connections to the HTTP API listener (at most http.maxConnections)', registers: [r] });
    this.#receipts = new Counter({
      name: 'smppd_receipts_total',
      help: 'delivery receipts by result: matched, parked (before their submit_sm_resp), ignored (no change), unknown_stat, no_id (names no message id: dropped), error (answered with a temporary error)',
      labelNames: ['upstream', 'result'], registers: [r],
    });
    this.#parkedDropped = new Counter({
      name: 'smppd_receipts_parked_dropped_total',
      help: 'parked receipts dropped before any submit_sm_resp gave their id: age (older than parkedReceipts.maxAgeSeconds), cap (the oldest past parkedReceipts.max)',
      labelNames: ['upstream', 'reason'], registers: [r],
    });
    this.#dispatched = new Counter({
      name: 'smppd_dispatched_total', help: 'messages handed to the binds, by how they left the store: claim (taken from the queue), accept (stored claimed and handed over at once: the queue was empty)',
      labelNames: ['upstream', 'via'], registers: [r],
    });
    this.#inbound = new Counter({
      name: 'smppd_inbound_total',
      help: 'inbound (MO) messages by result: stored (whole, or incomplete after their wait), error (a part the store failed on, answered with a temporary error)',
      labelNames: ['upstream', 'result'], registers: [r],
    });
    this.#amqpMessages = new Counter({
      name: 'smppd_amqp_messages_total', help: 'send requests from the amqp queue by result: accepted (stored, acked), dead (refused to the dead-letter exchange), requeued (a passing failure), waiting (past its client\'s rate limit or at its clients[].maxQueued: set aside in the client\'s wait queue, counted again when it is settled from there), duplicate (its messageId or reference was committed before, within amqp.dedupHours: acked, not stored again)',
      labelNames: ['result'], registers: [r],
    });
    this.#rateLimited = new Counter({
      name: 'smppd_rate_limited_total', help: 'send requests past their client\'s clients[].rateLimit: refused with 429 (ingress http), or set aside in the client\'s wait queue (ingress amqp)',
      labelNames: ['client', 'ingress'], registers: [r],
    });
    this.#amqpConnected = new Gauge({ name: 'smppd_amqp_connected', help: '1 while the queue ingress is connected to the broker and consuming', registers: [r] });
    this.#pruned = new Counter({
      name: 'smppd_store_pruned_total', help: 'rows the retention sweep deleted, older than store.retentionDays and finished with: message (with its parts and receipts), batch (with its schedule), inbound; and idempotency_key (expired)',
      labelNames: ['kind'], registers: [r],
    });
    this.#storeErrors = new Counter({
      name: 'smppd_store_errors_total', help: 'store calls that failed (the database unreachable or refusing, a disk full), by the store method that failed',
      labelNames: ['operation'], registers: [r],
    });
    this.#recordsWritten = new Counter({ name: 'smppd_records_written_total', help: 'message records appended to records.path (a line repeated after a crash counts again)', registers: [r] });
    this.#recordWriteErrors = new Counter({ name: 'smppd_record_write_errors_total', help: 'appends to records.path that failed (the records stay queued and are written again)', registers: [r] });
    const readRecords = options.readRecords;
    if (readRecords) {
      new Gauge({
        name: 'smppd_records_pending', help: 'message records queued in the store and not yet written to records.path', registers: [r],
        async collect() { this.set(await readRecords()); },
      });
    }
    const readQueue = options.readQueue;
    if (readQueue) {
      new Gauge({
        name: 'smppd_queue_parts', help: 'message parts by state: queued (waiting for the dispatcher) and inflight (handed to the binds)', labelNames: ['state'], registers: [r],
        async collect() {
          const q = await readQueue();
          this.set({ state: 'queued' }, q.queued);
          this.set({ state: 'inflight' }, q.inflight);
        },
      });
      new Gauge({
        name: 'smppd_dispatch_lag_seconds', help: 'how long the next part to send has been ready and waiting for the dispatcher (0: nothing waiting)', labelNames: ['upstream'], registers: [r],
        async collect() {
          this.reset();
          for (const [upstream, seconds] of Object.entries((await readQueue()).lagSeconds ?? {})) this.set({ upstream }, seconds);
        },
      });
      new Gauge({
        name: 'smppd_parked_receipts', help: 'receipts waiting for the submit_sm_resp of their part', registers: [r],
        async collect() {
          this.set((await readQueue()).parked);
        },
      });
    }
    const readOutbox = options.readOutbox;
    if (readOutbox) {
      const outbox = (name: string, help: string, pick: (o: OutboxReading) => number): void => {
        new Gauge({
          name, help, labelNames: ['client'], registers: [r],
          async collect() {
            const readings = await readOutbox();
            this.reset();
            for (const o of readings) this.set({ client: o.client }, pick(o));
          },
        });
      };
      outbox('smppd_outbox_depth', 'events waiting for delivery (due or backing off)', (o) => o.pending);
      outbox('smppd_outbox_dead', 'events parked as dead (GET /events/dead lists them)', (o) => o.dead);
    }

    registerBindMetrics(r, readBinds, options.readAccounts ?? (() => []));
  }

  response(upstream: string, status: string, latencyMs: number): void {
    this.#responses.inc({ upstream, status });
    this.#latency.observe({ upstream }, latencyMs / 1000);
  }

  routed(route: string, upstream: string): void {
    this.#routed.inc({ route, upstream });
  }

  routeFailover(route: string, from: string, to: string): void {
    this.#routeFailovers.inc({ route, from, to });
  }

  failoverMoved(from: string, to: string, messages: number): void {
    this.#failoverMoved.inc({ from, to }, messages);
  }

  uncertain(upstream: string, cause: 'timeout' | 'connection_lost'): void {
    this.#uncertain.inc({ upstream, cause });
  }

  lateResponse(upstream: string): void {
    this.#late.inc({ upstream });
  }

  duplicate(upstream: string): void {
    this.#duplicates.inc({ upstream });
  }

  retry(upstream: string, status: string): void {
    this.#retries.inc({ upstream, status });
  }

  throttled(upstream: string, bind: string): void {
    this.#throttled.inc({ upstream, bind });
  }

  reconnect(upstream: string, bind: string): void {
    this.#reconnects.inc({ upstream, bind });
  }

  deliveryThrottled(upstream: string): void {
    this.#deliveriesThrottled.inc({ upstream });
  }

  webhookAttempt(client: string, result: string, seconds: number): void {
    this.#webhookAttempts.inc({ client, result });
    this.#webhookRequest.observe({ client }, seconds);
  }

  eventDelivered(client: string, kind: string, seconds: number): void {
    this.#eventLatency.observe({ client, kind }, seconds);
  }

  eventDead(client: string): void {
    this.#eventsDead.inc({ client });
  }

  eventsSuperseded(count: number): void {
    this.#eventsSuperseded.inc(count);
  }

  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.#httpRequests.inc({ route, method, status: String(status) });
    this.#httpSeconds.observe({ route }, seconds);
  }

  /** `HttpListenerMetrics` of the HTTP listener. */
  httpRefused(reason: string): void {
    this.#httpRefused.inc({ reason });
  }

  httpConnections(delta: number): void {
    this.#httpConnections.inc(delta);
  }

  /** `DeliveryCounters` of the dispatch layer. */
  receipt(upstream: string, result: string): void {
    this.#receipts.inc({ upstream, result });
  }

  inbound(upstream: string, result: string): void {
    this.#inbound.inc({ upstream, result });
  }

  /** `ParkingCounters` of the receipt parking. */
  parkedDropped(upstream: string, reason: 'age' | 'cap', count: number): void {
    this.#parkedDropped.inc({ upstream, reason }, count);
  }

  /** `DispatchCounters` of the dispatcher. */
  dispatched(upstream: string, via: 'claim' | 'accept'): void {
    this.#dispatched.inc({ upstream, via });
  }

  /** `AmqpIngressMetrics` of the queue ingress. */
  amqpMessage(result: 'accepted' | 'dead' | 'requeued' | 'waiting' | 'duplicate'): void {
    this.#amqpMessages.inc({ result });
  }

  /** A send request past its client's rate limit. */
  rateLimited(client: string, ingress: 'http' | 'amqp'): void {
    this.#rateLimited.inc({ client, ingress });
  }

  amqpConnected(up: boolean): void {
    this.#amqpConnected.set(up ? 1 : 0);
  }

  /** `RetentionMetrics` of the retention sweep: kind is message, batch or inbound. */
  storePruned(kind: string, count: number): void {
    this.#pruned.inc({ kind }, count);
  }

  /** A store call that failed, by its method (`accept`, `claim`, …). */
  storeError(operation: string): void {
    this.#storeErrors.inc({ operation });
  }

  /** `RecordMetrics` of the records writer. */
  recordsWritten(count: number): void {
    this.#recordsWritten.inc(count);
  }

  recordWriteFailed(): void {
    this.#recordWriteErrors.inc();
  }

  /** The exposition text and its content type, for GET /metrics. */
  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The value of a counter or gauge (summed over labels that match `labels`): for tests and `send`. */
  async value(name: string, labels: Record<string, string> = {}): Promise<number> {
    const metric = this.registry.getSingleMetric(name);
    if (!metric) return 0;
    const data = await metric.get();
    return data.values
      .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
      .reduce((sum, v) => sum + v.value, 0);
  }
}
