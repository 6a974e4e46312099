/**
 * What the operator on call asks first (GET /admin/status, the status page, `smppd status`): each
 * upstream and bind (state and why, bound since, backoff left, submit rate over the last 10 s and
 * minute, window in use, throttle), the queue per upstream and per client, each client's outbox,
 * the store's health (one round trip, timed), version and uptime. Read on demand, never cached:
 * the binds from the pool, routing's view from the availability, the rest from the store.
 */
import type { Clock } from '../core/clock.js';
import type { BindState, BindStats } from '../smpp/bind.js';
import { roundRate } from '../smpp/rate-controller.js';
import type { QueueDepth } from '../store/intake.js';
import type { OutboxDepth } from '../store/outbox.js';
import type { UpstreamSuspension } from '../store/upstream-suspensions.js';
import type { UpstreamAvailabilityView } from './upstream-availability.js';

export interface AdminBindStatus {
  /** `upstream#index`. */
  id: string;
  state: BindState;
  /** Why it is in its state (the last error, the stop's reason); '' when none. */
  detail: string;
  /** Seconds until it reconnects, while in backoff; else null. */
  backoffSecondsLeft: number | null;
  /** ISO 8601; null unless bound. */
  boundSince: string | null;
  /** submit_sm written per second, averaged over the last 10 s and the last minute. */
  submitRate: { last10s: number; last1m: number };
  /** inUse = outstanding + held (answered, not stored yet). */
  window: { size: number; inUse: number; held: number };
  /**
   * The pacing rate in force (submit_sm/s; 0 = unpaced), the limit the SMSC was last measured to
   * accept (null before a throttle), throttle episodes and throttled submits since start, slowed now.
   */
  throttle: { rate: number; learnedLimit: number | null; episodes: number; throttledSubmits: number; throttled: boolean };
}

export interface AdminUpstreamStatus {
  name: string;
  /** Routing's view: a bind bound and not suspended. */
  available: boolean;
  suspended: { since: string; by: string; reason: string | null } | null;
  /** Parts queued for it (not inflight); null when the store could not be read. */
  queued: number | null;
  binds: AdminBindStatus[];
}

export interface AdminClientStatus {
  name: string;
  /** Its parts queued (not inflight); null when the store could not be read. */
  queued: number | null;
  /** Its events waiting and dead; null when the store could not be read. */
  outbox: { pending: number; dead: number } | null;
}

export interface AdminStatus {
  version: string;
  instanceId: string;
  /** ISO 8601. */
  startedAt: string;
  uptimeSeconds: number;
  store: { kind: 'sqlite' | 'postgres'; ok: boolean; latencyMs: number | null; error: string | null };
  upstreams: AdminUpstreamStatus[];
  clients: AdminClientStatus[];
}

/** Where the status comes from. */
export interface AdminStatusSources {
  version: string;
  /** The store's instance id (PostgreSQL), else the host name. */
  instanceId: string;
  storeKind: 'sqlite' | 'postgres';
  clock: Clock;
  /** Wall ms and monotonic ms at start. */
  startedAt: { wall: number; mono: number };
  binds: () => readonly BindStats[];
  availability: () => readonly UpstreamAvailabilityView[];
  suspension: (upstream: string) => UpstreamSuspension | undefined;
  /** The configured clients, in file order (those with nothing queued are listed too). */
  clients: () => readonly string[];
  store: {
    queuedByUpstream(): Promise<Array<{ upstream: string; queued: number }>>;
    queueDepth(): Promise<QueueDepth>;
    outboxDepth(): Promise<OutboxDepth[]>;
    /** A small read: the store's round trip, timed as its health. */
    listSuspensions(): Promise<unknown>;
  };
}

/** One reading of everything; a store that fails is reported (store.ok false), never thrown. */
export async function readAdminStatus(s: AdminStatusSources): Promise<AdminStatus> {
  const { clock } = s;
  const began = clock.now();
  const health = s.store.listSuspensions().then(
    () => ({ ok: true, latencyMs: Math.round((clock.now() - began) * 100) / 100, error: null }),
    (e: unknown) => ({ ok: false, latencyMs: null, error: e instanceof Error ? e.message : String(e) }),
  );
  const [store, byUpstream, byClient, outbox] = await Promise.all([
    health, orNull(s.store.queuedByUpstream()), orNull(s.store.queueDepth()), orNull(s.store.outboxDepth()),
  ]);
  const now = clock.now();
  const binds = s.binds();
  const upstreamQueue = new Map(byUpstream?.map((u) => [u.upstream, u.queued]));
  const clientQueue = new Map(byClient?.byClient.map((c) => [c.client, c.queued]));
  const clientOutbox = new Map(outbox?.map((o) => [o.client, o]));
  // Clients of the config first, in its order; then any other with something stored (one removed from the config).
  const names = [...new Set([...s.clients(), ...clientQueue.keys(), ...clientOutbox.keys()])];
  return {
    version: s.version,
    instanceId: s.instanceId,
    startedAt: new Date(s.startedAt.wall).toISOString(),
    uptimeSeconds: Math.floor((now - s.startedAt.mono) / 1000),
    store: { kind: s.storeKind, ...store },
    upstreams: s.availability().map((u) => {
      const suspension = s.suspension(u.name);
      return {
        name: u.name,
        available: u.available,
        suspended: suspension ? { since: new Date(suspension.since).toISOString(), by: suspension.by, reason: suspension.reason } : null,
        queued: byUpstream === null ? null : upstreamQueue.get(u.name) ?? 0,
        binds: binds.filter((b) => b.upstream === u.name).map(bindStatus),
      };
    }),
    clients: names.map((name) => {
      const o = clientOutbox.get(name);
      return {
        name,
        queued: byClient === null ? null : clientQueue.get(name) ?? 0,
        outbox: outbox === null ? null : { pending: o?.pending ?? 0, dead: o?.dead ?? 0 },
      };
    }),
  };
}

function bindStatus(b: BindStats): AdminBindStatus {
  return {
    id: b.id,
    state: b.state,
    detail: b.detail,
    backoffSecondsLeft: b.backoffSecondsLeft === null ? null : Math.round(b.backoffSecondsLeft * 10) / 10,
    boundSince: b.boundSince === null ? null : new Date(b.boundSince).toISOString(),
    submitRate: { last10s: Math.round((b.sentLast10s / 10) * 10) / 10, last1m: Math.round((b.sentLastMinute / 60) * 10) / 10 },
    window: { size: b.window, inUse: b.outstanding + b.held, held: b.held },
    throttle: {
      rate: roundRate(b.rate), learnedLimit: b.learnedLimit === null ? null : roundRate(b.learnedLimit),
      episodes: b.throttleEpisodes, throttledSubmits: b.throttledSubmits, throttled: b.throttled,
    },
  };
}

async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch {
    return null;
  }
}
