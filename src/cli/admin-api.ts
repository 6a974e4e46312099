/**
 * The admin API's part of the daemon: the suspensions (loaded before anything is sent, read
 * again every few seconds from a store that several instances share), and what the /admin routes
 * are given when the config has an `admin` section.
 */
import { hostname } from 'node:os';
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import type { SmppdConfig } from '../config/schema.js';
import { readAdminStatus, type AdminStatus } from '../dispatch/admin-status.js';
import type { Failover } from '../dispatch/failover.js';
import { Suspensions } from '../dispatch/suspensions.js';
import type { UpstreamAvailability } from '../dispatch/upstream-availability.js';
import { AdminAuth, type AdminHttpDeps, type Authenticator } from '../ingress/http/server.js';
import type { Pool } from '../smpp/pool.js';
import type { Store } from '../store/store.js';
import { version } from './version.js';

/** How often an instance on a shared store reads the suspensions again: one instance's suspend reaches the others within it. */
export const SUSPENSIONS_REFRESH_MS = 2_000;

export interface AdminParts {
  suspensions: Suspensions;
  /** The routes' dependencies; absent without an `admin` section. */
  http?: AdminHttpDeps;
  /** One reading of the status (what GET /admin/status answers). */
  status(): Promise<AdminStatus>;
}

export interface AdminPartsDeps {
  config: SmppdConfig;
  store: Store;
  pool: Pool;
  availability: UpstreamAvailability;
  failover: Failover;
  /** The clients' authenticator: a client's token at /admin is answered 403. */
  authenticator: Authenticator;
  clock: Clock;
  log: Log;
  /** The configured clients' names now (SIGHUP may change them). */
  clients: () => readonly string[];
}

export function adminParts(d: AdminPartsDeps): AdminParts {
  const { config, store, pool, availability, clock } = d;
  const suspensions = new Suspensions({
    store, clock, log: d.log.child({ component: 'admin' }), upstreams: config.upstreams.map((u) => u.name),
    ...(config.store.kind === 'postgres' ? { refreshEveryMs: SUSPENSIONS_REFRESH_MS } : {}),
    apply: (upstream, suspended) => {
      // Routing first (new sends, claims), then the pool (what it holds goes back), then its queue moves.
      availability.setSuspended(upstream, suspended);
      pool.suspend(upstream, suspended);
      if (suspended) d.failover.runNow();
    },
  });
  const startedAt = { wall: clock.wallNow(), mono: clock.now() };
  const instanceId = config.store.kind === 'postgres' ? config.store.instanceId : hostname();
  const status = () => readAdminStatus({
    version: version(), instanceId, storeKind: config.store.kind, clock, startedAt, store, clients: d.clients,
    binds: () => pool.stats(), availability: () => availability.view(), suspension: (u) => suspensions.get(u),
  });
  if (!config.admin) return { suspensions, status };
  const auth = new AdminAuth(config.admin.tokens, (token) => d.authenticator.knows(token));
  return {
    suspensions, status,
    http: {
      auth, status, messages: store,
      suspend: (upstream, by, reason) => suspensions.suspend(upstream, by, reason),
      resume: (upstream, by) => suspensions.resume(upstream, by),
    },
  };
}
