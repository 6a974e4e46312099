/**
 * What the status page and `smppd status` both say about GET /admin/status, worded once: an
 * upstream's state in one word, how long something has lasted, a rate. Durations are reckoned on
 * the daemon's clock (startedAt + uptimeSeconds), so a skewed clock where they are read does not show.
 */
import type { AdminStatus, BindStatus, UpstreamStatus } from './admin-views.js';

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

/** How many of an upstream's binds are bound. */
export function boundCount(u: UpstreamStatus): number {
  return u.binds.filter((b: BindStatus) => b.state === 'bound').length;
}

/** 0s, 59s, 1m05s, 2h03m, 3d04h: the two largest units, for how long something has lasted. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  const two = (n: number): string => String(n).padStart(2, '0');
  if (s < 3_600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3_600)}h${two(Math.floor((s % 3_600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${two(Math.floor((s % 86_400) / 3_600))}h`;
}

/** Seconds from the ISO time `since` to `nowMs`; null when `since` is not a time. */
export function secondsSince(since: string, nowMs: number): number | null {
  const t = Date.parse(since);
  return Number.isNaN(t) ? null : Math.max(0, (nowMs - t) / 1000);
}

/** A rate with one decimal below 100, whole above: 0, 9.5, 950. */
export function formatRate(rate: number): string {
  if (rate === 0) return '0';
  return rate < 100 ? rate.toFixed(1) : String(Math.round(rate));
}

/** The pacing in force, and the limit the SMSC was measured at when there is one: `485/s (limit 500/s)`. */
export function pace(t: { rate: number; learnedLimit: number | null }): string {
  const rate = t.rate === 0 ? 'unpaced' : `${formatRate(t.rate)}/s`;
  return t.learnedLimit === null ? rate : `${rate} (limit ${formatRate(t.learnedLimit)}/s)`;
}
