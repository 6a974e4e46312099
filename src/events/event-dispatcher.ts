/**
 * Delivers the outbox to the clients' webhooks. Per client: claim due events from the store
 * (only the oldest undelivered event of each message, so a message's events go out in order),
 * POST them with at most `concurrency` in flight, and record each result: delivered events
 * leave the outbox; failures come back after an exponential backoff with full jitter, until
 * the event has been failing for `maxAgeMs`, when it is parked as dead (kept, listable,
 * re-sendable). Results are recorded in batches, one commit per turn under load. On a store that
 * several instances share, the events another instance had claimed when it died are taken over
 * within the store's lease (`LeaseUpkeep`, which also renews this instance's own event leases),
 * not after the longer lease of their delivery.
 */
import { fullJitterDelay, type BackoffPolicy } from '../core/backoff.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import { LeaseUpkeep } from '../core/lease-upkeep.js';
import type { Log } from '../core/log.js';
import type { EventOutbox, EventOutcome, OutboxEvent } from '../store/outbox.js';
import type { PostOutcome } from './webhook-client.js';

/** Where one client's events go: a `WebhookClient`, or a test double. */
export interface EventSink {
  /** What may be logged of the destination (scheme://host:port). */
  readonly origin: string;
  post(body: string, eventId: number): Promise<PostOutcome>;
  close(): Promise<void>;
}

export interface EventClient {
  name: string;
  sink: EventSink;
  /** Requests in flight at most. ≥ 1. */
  concurrency: number;
  /** Delay between attempts: full jitter under min(maxMs, initialMs · 2^attempt). */
  retry: BackoffPolicy;
  /** An event still failing this long after it was queued is parked as dead. > 0. */
  maxAgeMs: number;
  /** How long a claimed event stays reserved; longer than a request can take. */
  leaseMs: number;
}

/**
 * Events claimed ahead of the free request slots, per client, at most. A message's events go
 * one at a time, each after a store round trip that records the one before, so throughput
 * comes from many messages at once: a few slots' worth would leave a fast receiver idle
 * while the store answers.
 */
const CLAIM_AHEAD = 1_000;

/** Counters and timings of deliveries (prom-client in the daemon; a no-op by default). */
export interface EventMetrics {
  /** One POST and how it ended: 'ok' or its failure kind. */
  webhookAttempt(client: string, result: 'ok' | PostOutcomeFailure, seconds: number): void;
  /** An event acknowledged, `seconds` after it was written. */
  eventDelivered(client: string, kind: OutboxEvent['kind'], seconds: number): void;
  /** An event parked as dead. */
  eventDead(client: string): void;
  /** Dead events dropped because a later event of their message was delivered. */
  eventsSuperseded(count: number): void;
}

export type PostOutcomeFailure = Extract<PostOutcome, { ok: false }>['failure'];

export const noEventMetrics: EventMetrics = { webhookAttempt: () => {}, eventDelivered: () => {}, eventDead: () => {}, eventsSuperseded: () => {} };

export interface EventDispatcherOptions {
  store: EventOutbox;
  clients: EventClient[];
  clock: Clock;
  log: Log;
  metrics?: EventMetrics;
  /** How often each client's outbox is looked at when nothing else woke it. Default 100 ms. */
  pollMs?: number;
  /** In [0, 1): the jitter's source (tests fix it). Default Math.random. */
  random?: () => number;
}

interface Claimed {
  event: OutboxEvent;
  leaseUntil: number;
}

interface Lane {
  client: EventClient;
  /** Claimed, waiting for a free request slot. */
  waiting: Claimed[];
  /** Ids waiting or in flight: a claim that returns one again (its lease ran out) does not send it twice. */
  held: Set<number>;
  inFlight: number;
  /** The claim under way, if any (stop waits for it). */
  claiming: Promise<void> | undefined;
  /** The last claim was full, or something was settled since: there may be more due now. */
  more: boolean;
  /** The webhook's last attempt failed (logged once per change, not per event). */
  failing: boolean;
}

export class EventDispatcher {
  readonly #store: EventOutbox;
  readonly #clock: Clock;
  readonly #log: Log;
  readonly #metrics: EventMetrics;
  readonly #pollMs: number;
  readonly #random: () => number;
  readonly #lanes = new Map<string, Lane>();
  /** Results not yet handed to the store; `#flush` sends them in one call. */
  #outcomes: Array<{ outcome: EventOutcome; client: string }> = [];
  #flushing: Promise<void> | undefined;
  #posts = new Set<Promise<void>>();
  #timer: TimerHandle | undefined;
  #stopped = true;
  /** A shared store's: this instance's event leases renewed, a gone instance's events taken over. */
  readonly #upkeep: LeaseUpkeep | undefined;

  constructor(o: EventDispatcherOptions) {
    this.#store = o.store;
    this.#clock = o.clock;
    this.#log = o.log;
    this.#metrics = o.metrics ?? noEventMetrics;
    this.#pollMs = o.pollMs ?? 100;
    this.#random = o.random ?? Math.random;
    for (const client of o.clients) {
      this.#lanes.set(client.name, { client, waiting: [], held: new Set(), inFlight: 0, claiming: undefined, more: true, failing: false });
    }
    const { store, log } = o;
    // Without clients, no events: nothing to renew, and the instances with clients take the others' over.
    this.#upkeep = store.leaseMs === undefined || o.clients.length === 0 ? undefined : new LeaseUpkeep({
      clock: o.clock, leaseMs: store.leaseMs,
      renew: (now) => store.renewEventLeases?.(now) ?? Promise.resolve(0),
      takeOver: (now) => store.recoverAbandonedEvents?.(now) ?? Promise.resolve(0),
      onTakenOver: (events) => {
        log.warn({ event: 'recovered_abandoned_events', events }, 'events another instance had claimed when it stopped are due again');
        this.wake();
      },
      onError: (e) => log.error({ event: 'store_error', err: e }, 'renewing this instance\'s event leases or recovering abandoned events failed'),
    });
  }

  /** Whether `client` has a webhook: its messages produce events. */
  has(client: string): boolean {
    return this.#lanes.has(client);
  }

  start(): void {
    this.#stopped = false;
    this.#tick();
    // At once: a restart may find the events of an instance that died meanwhile.
    this.#upkeep?.start(true);
    // Events of a client that no longer has a webhook wait for one (its messages written before
    // the change still add theirs; new messages add none): said once, at start.
    void this.#store.outboxDepth().then((depths) => {
      for (const d of depths) {
        if (!this.#lanes.has(d.client) && d.pending > 0) {
          this.#log.warn({ event: 'events_without_webhook', client: d.client, pending: d.pending },
            'this client has events waiting but no webhook in the config; they are kept until it has one again');
        }
      }
    }, (e: unknown) => this.#log.error({ event: 'store_error', err: e }, 'reading the outbox failed'));
  }

  /** Looks at every client's outbox at once (after a re-send, say) instead of at the next poll. */
  wake(): void {
    for (const lane of this.#lanes.values()) {
      lane.more = true;
      this.#pump(lane);
    }
  }

  /**
   * Stops claiming; lets the requests in flight end (each within its timeout), gives the
   * claimed but unsent events back, records every result, and closes the connections.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    // A claim under way would leave its events leased in memory: let it land first.
    await Promise.all([...this.#lanes.values()].map((l) => l.claiming));
    while (this.#posts.size > 0) await Promise.all([...this.#posts]);
    for (const lane of this.#lanes.values()) {
      for (const { event } of lane.waiting.splice(0)) this.#queue({ id: event.id, kind: 'release' }, lane.client.name);
    }
    await this.#flushAll();
    await this.#upkeep?.stop();
    await Promise.all([...this.#lanes.values()].map((l) => l.client.sink.close()));
  }

  /** Requests in flight and claimed events waiting, per client (tests, metrics). */
  load(client: string): { inFlight: number; waiting: number } {
    const lane = this.#lanes.get(client);
    return { inFlight: lane?.inFlight ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  #tick(): void {
    if (this.#stopped) return;
    this.wake();
    this.#timer = this.#clock.setTimer(this.#pollMs, () => this.#tick());
  }

  /** Starts requests while there are free slots, and claims more when the waiting list runs low. */
  #pump(lane: Lane): void {
    if (this.#stopped) return;
    const { concurrency, leaseMs } = lane.client;
    const now = this.#clock.wallNow();
    while (lane.inFlight < concurrency && lane.waiting.length > 0) {
      const next = lane.waiting.shift()!;
      // An event that waited through most of its lease is given back rather than sent late: its
      // lease could end during the request, and a claim could then hand it out again.
      if (next.leaseUntil - now < leaseMs / 2) this.#queue({ id: next.event.id, kind: 'release' }, lane.client.name);
      else this.#send(lane, next.event);
    }
    const room = concurrency + CLAIM_AHEAD - lane.inFlight - lane.waiting.length;
    if (lane.claiming || !lane.more || room < Math.min(CLAIM_AHEAD / 4, Math.max(1, concurrency))) return;
    lane.more = false;
    const leaseUntil = now + leaseMs;
    lane.claiming = this.#store.claimEvents(lane.client.name, now, room, leaseUntil).then((events) => {
      for (const event of events) {
        // Held until its outcome is committed (see #flush): a claim that returns it again is ignored.
        if (lane.held.has(event.id)) continue;
        lane.held.add(event.id);
        lane.waiting.push({ event, leaseUntil });
      }
      if (events.length === room) lane.more = true;
    }, (e: unknown) => {
      this.#log.error({ event: 'store_error', client: lane.client.name, err: e }, 'claiming events failed; trying again at the next poll');
    }).finally(() => {
      lane.claiming = undefined;
      this.#pump(lane);
    });
  }

  #send(lane: Lane, event: OutboxEvent): void {
    lane.inFlight++;
    const post = lane.client.sink.post(event.payload, event.id)
      .then((result) => this.#record(lane, event, result))
      .catch((e: unknown) => {
        // A sink that broke its promise to never reject: the event is tried again.
        this.#log.error({ event: 'webhook_error', client: lane.client.name, eventId: event.id, err: e }, 'a webhook request failed unexpectedly');
        this.#queue({ id: event.id, kind: 'retry', at: this.#clock.wallNow(), error: 'internal error' }, lane.client.name);
      })
      .finally(() => {
        lane.inFlight--;
        this.#posts.delete(post);
        this.#pump(lane);
      });
    this.#posts.add(post);
  }

  #record(lane: Lane, event: OutboxEvent, result: PostOutcome): void {
    const { client } = lane;
    const now = this.#clock.wallNow();
    this.#metrics.webhookAttempt(client.name, result.ok ? 'ok' : result.failure, result.ms / 1000);
    if (result.ok) {
      this.#metrics.eventDelivered(client.name, event.kind, Math.max(0, now - event.createdAt) / 1000);
      this.#noteHealth(lane, undefined);
      this.#queue({ id: event.id, kind: 'delivered' }, client.name);
      return;
    }
    const error = result.failure === 'status' ? `HTTP ${result.status}` : `${result.failure}: ${result.error}`;
    this.#noteHealth(lane, error);
    const deadline = event.queuedAt + client.maxAgeMs;
    if (now >= deadline) {
      this.#metrics.eventDead(client.name);
      this.#log.warn({ event: 'webhook_event_dead', client: client.name, eventId: event.id, messageId: event.messageId, attempts: event.attempts + 1, error },
        'an event failed for longer than maxAgeHours and is parked as dead; list and re-send it with GET /events/dead and POST /events/dead/resend');
      this.#queue({ id: event.id, kind: 'dead', error }, client.name);
      return;
    }
    // The last attempt falls on the deadline rather than after it.
    const at = Math.min(now + fullJitterDelay(client.retry, event.attempts, this.#random()), deadline);
    this.#queue({ id: event.id, kind: 'retry', at, error }, client.name);
  }

  /** Logs a webhook going down and coming back once, not once per event. */
  #noteHealth(lane: Lane, error: string | undefined): void {
    const failing = error !== undefined;
    if (failing === lane.failing) return;
    lane.failing = failing;
    const { name, sink } = lane.client;
    if (failing) this.#log.warn({ event: 'webhook_failing', client: name, origin: sink.origin, error }, 'webhook deliveries are failing; events are kept and retried with backoff');
    else this.#log.info({ event: 'webhook_recovered', client: name, origin: sink.origin }, 'webhook deliveries succeed again');
  }

  #queue(outcome: EventOutcome, client: string): void {
    this.#outcomes.push({ outcome, client });
    if (!this.#flushing) this.#flushing = this.#flush();
  }

  /** Sends what has gathered in one store call; what gathers meanwhile goes in the next. */
  async #flush(): Promise<void> {
    // One turn's results travel together.
    await Promise.resolve();
    while (this.#outcomes.length > 0) {
      const batch = this.#outcomes;
      this.#outcomes = [];
      try {
        const { superseded } = await this.#store.settleEvents(batch.map((b) => b.outcome), this.#clock.wallNow());
        if (superseded > 0) this.#metrics.eventsSuperseded(superseded);
      } catch (e) {
        // Not recorded: the events stay leased and come back when the lease ends (a delivered
        // one is then sent twice; receivers deduplicate, API §6.5).
        this.#log.error({ event: 'store_error', events: batch.length, err: e }, 'recording webhook results failed; the events will be tried again');
      }
      // Only now may a claim hand these events out again: before the commit, a claim that ran
      // after their lease ended would send an acknowledged event a second time.
      for (const b of batch) this.#lanes.get(b.client)?.held.delete(b.outcome.id);
      // A settled event may let the next event of its message go.
      for (const client of new Set(batch.map((b) => b.client))) {
        const lane = this.#lanes.get(client);
        if (lane) {
          lane.more = true;
          this.#pump(lane);
        }
      }
    }
    this.#flushing = undefined;
  }

  async #flushAll(): Promise<void> {
    while (this.#flushing || this.#outcomes.length > 0) {
      if (!this.#flushing) this.#flushing = this.#flush();
      await this.#flushing;
    }
  }
}
