/**
 * `smppd status` as text: GET /admin/status in a few compact tables (the daemon, its upstreams,
 * their binds, the clients' queues). Durations are reckoned on the daemon's clock (startedAt +
 * uptimeSeconds: status-facts.ts).
 */
import type { AdminStatus, BindStatus } from '../ingress/http/admin-ui/admin-views.js';
import { boundCount, daemonNow, formatDuration, formatRate, pace, secondsSince, upstreamState } from '../ingress/http/admin-ui/status-facts.js';
import { oneLine, renderTable } from './text-table.js';

/** How long a bind has been bound, or how long until it tries again; '-' when neither. */
function bindTiming(b: BindStatus, now: number): string {
  if (b.state === 'bound' && b.boundSince !== null) {
    const s = secondsSince(b.boundSince, now);
    return s === null ? '-' : formatDuration(s);
  }
  if (b.state === 'backoff' && b.backoffSecondsLeft !== null) return `retry-in-${formatDuration(b.backoffSecondsLeft)}`;
  return '-';
}

function storeLine(s: AdminStatus['store']): string {
  const latency = s.latencyMs === null ? '' : ` (${s.latencyMs.toFixed(1)} ms)`;
  return s.ok ? `store ${s.kind} ok${latency}` : `store ${s.kind} FAILING${latency}: ${oneLine(s.error ?? 'no detail')}`;
}

/** The lines `smppd status` prints. */
export function renderStatusTable(status: AdminStatus): string[] {
  const now = daemonNow(status);
  const lines = [
    `smppd ${oneLine(status.version)} on ${oneLine(status.instanceId)}, up ${formatDuration(status.uptimeSeconds)} (since ${status.startedAt})`,
    storeLine(status.store),
    '',
  ];

  if (status.upstreams.length === 0) {
    lines.push('no upstreams');
  } else {
    lines.push(...renderTable(['UPSTREAM', 'STATE', 'QUEUED', 'BOUND'], status.upstreams.map((u) => [
      u.name, upstreamState(u), u.queued ?? '?', `${boundCount(u)}/${u.binds.length}`,
    ])));
    for (const u of status.upstreams) {
      if (!u.suspended) continue;
      const s = secondsSince(u.suspended.since, now);
      const reason = u.suspended.reason === null ? '' : `: ${oneLine(u.suspended.reason)}`;
      lines.push(`${u.name} suspended since ${u.suspended.since}${s === null ? '' : ` (${formatDuration(s)})`} by ${u.suspended.by}${reason}`);
    }
  }

  const binds = status.upstreams.flatMap((u) => u.binds);
  if (binds.length > 0) {
    lines.push('', ...renderTable(
      ['BIND', 'STATE', 'FOR', 'RATE10S', 'RATE1M', 'WINDOW', 'HELD', 'PACE', 'THROTTLED', 'DETAIL'],
      binds.map((b) => [
        b.id, b.state, bindTiming(b, now), Number(formatRate(b.submitRate.last10s)), Number(formatRate(b.submitRate.last1m)),
        `${b.window.inUse}/${b.window.size}`, b.window.held,
        pace(b.throttle),
        b.throttle.throttled ? `yes(${b.throttle.episodes})` : `no(${b.throttle.episodes})`,
        b.detail === '' ? '-' : b.detail,
      ]),
    ));
  }

  if (status.clients.length > 0) {
    lines.push('', ...renderTable(['CLIENT', 'QUEUED', 'OUTBOX', 'DEAD'], status.clients.map((c) => [
      c.name, c.queued ?? '?', c.outbox?.pending ?? '?', c.outbox?.dead ?? '?',
    ])));
  }
  return lines;
}
