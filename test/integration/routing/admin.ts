/** What the admin API tests share: the `admin:` config lines and calls to /admin over HTTP. */
import type { RoutingDaemon } from './rig.js';

export const ADMIN_TOKEN = 'admin-token-for-ops-0123456789';

/** The `admin:` section, one admin `ops`. */
export const ADMIN_CONFIG = [`admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN} }] }`];

/** A request to the daemon's HTTP API with `token` (default the admin's); the status and the parsed body. */
export async function call(r: RoutingDaemon, method: 'GET' | 'POST', path: string, o: { token?: string | null; body?: object } = {}) {
  const token = o.token === undefined ? ADMIN_TOKEN : o.token;
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`http://127.0.0.1:${r.d.http.port}${path}`, { method, headers, ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) as Record<string, unknown> };
}

/** POST /admin/upstreams/{name}/suspend as ops; throws unless 200. */
export async function suspend(r: RoutingDaemon, upstream: string, reason?: string): Promise<Record<string, unknown>> {
  const res = await call(r, 'POST', `/admin/upstreams/${upstream}/suspend`, reason === undefined ? {} : { body: { reason } });
  if (res.status !== 200) throw new Error(`suspend ${upstream}: ${res.status} ${res.text}`);
  return res.body!;
}

/** POST /admin/upstreams/{name}/resume as ops; throws unless 200. */
export async function resume(r: RoutingDaemon, upstream: string): Promise<Record<string, unknown>> {
  const res = await call(r, 'POST', `/admin/upstreams/${upstream}/resume`);
  if (res.status !== 200) throw new Error(`resume ${upstream}: ${res.status} ${res.text}`);
  return res.body!;
}

export interface StatusBind { id: string; state: string; detail: string; boundSince: string | null; backoffSecondsLeft: number | null; submitRate: { last10s: number; last1m: number }; window: { size: number; inUse: number; held: number }; throttle: { rate: number; episodes: number; throttled: boolean } }
export interface StatusUpstream { name: string; available: boolean; suspended: { since: string; by: string; reason: string | null } | null; queued: number | null; binds: StatusBind[] }
export interface Status {
  version: string; instanceId: string; startedAt: string; uptimeSeconds: number;
  store: { kind: string; ok: boolean; latencyMs: number | null; error: string | null };
  upstreams: StatusUpstream[];
  clients: Array<{ name: string; queued: number | null; outbox: { pending: number; dead: number } | null }>;
}

/** GET /admin/status as ops. */
export async function status(r: RoutingDaemon): Promise<Status> {
  const res = await call(r, 'GET', '/admin/status');
  if (res.status !== 200) throw new Error(`status: ${res.status} ${res.text}`);
  return res.body as unknown as Status;
}
