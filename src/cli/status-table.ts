/**
 * `smppd status` as text: GET /admin/status in a few compact tables (the daemon, its upstreams,
 * their binds, the clients' queues). Durations are reckoned on the daemon's clock (startedAt +
 * uptimeSeconds), so a skewed clock where the command runs does not show.
 */
import type { AdminStatus, BindStatus, UpstreamStatus } from '../ingress/http/admin-ui/admin-views.js';
import { formatDuration, formatRate, oneLine, renderTable, secondsSince } from './text-table.js';

/** The daemon's time when it answered, in epoch milliseconds. */
export function daemonNow(status: AdminStatus): number {
  const started = Date.parse(status.startedAt);
  return (Number.isNaN(started) ? 0 : started) + status.uptimeSeconds * 1000;
}

/** An upstream's state in one word: suspended (the operator's word wins), available or unavailable. */
export function upstreamState(u: UpstreamStatus): 'suspended' | 'available' | 'unavailable' {
  if (u.suspended) return 'suspended';
  return u.available ? 'available' : 'unavailable';
}

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
      u.name, upstreamState(u), u.queued, `${u.binds.filter((b) => b.state === 'bound').length}/${u.binds.length}`,
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
        b.id, b.state, bindTiming(b, now), formatRate(b.submitRate.last10s), formatRate(b.submitRate.last1m),
        `${b.window.inUse}/${b.window.size}`, b.window.held,
        b.throttle.rate === 0 ? 'unpaced' : `${formatRate(b.throttle.rate)}/s`,
        b.throttle.throttled ? `yes(${b.throttle.episodes})` : `no(${b.throttle.episodes})`,
        b.detail === '' ? '-' : b.detail,
      ]),
    ));
  }

  if (status.clients.length > 0) {
    lines.push('', ...renderTable(['CLIENT', 'QUEUED', 'OUTBOX', 'DEAD'], status.clients.map((c) => [
      c.name, c.queued, c.outbox.pending, c.outbox.dead,
    ])));
  }
  return lines;
}
