/**
 * Whether the process may open as many files as its configuration can make it need. Every HTTP
 * connection is a file descriptor, and so is every bind, webhook connection and store file: a
 * flood of connections up to http.maxConnections must leave room for those, or the daemon fails
 * to reconnect a bind or open a webhook connection while the flood lasts. Linux only (it reads
 * /proc/self/limits, after Node has raised the soft limit to the hard one); elsewhere it says nothing.
 */
import { readFileSync } from 'node:fs';
import type { Log } from '../core/log.js';
import type { SmppdConfig } from '../config/schema.js';
import { METRICS_MAX_CONNECTIONS } from '../ingress/http/server.js';

/**
 * Descriptors of a daemon before its connections: stdio and the log, the event loops of the
 * main and the store's worker thread with their wakeup pipes, SQLite's database, WAL and shared
 * memory, the listening sockets. Set well above what these come to, because their number moves
 * with Node's version and the platform: a base too low would keep the warning silent when a
 * flood could starve a bind of descriptors, one too high only warns a little early.
 */
const BASE = 64;
/** `PostgresStore`'s pool (its default size) and its lock connection. */
const POSTGRES = 11;
/** The queue ingress's and the event publisher's connections. */
const AMQP = 2;
/** A separate metrics listener and the connections it takes at most. */
const METRICS = 1 + METRICS_MAX_CONNECTIONS;

/** The soft "Max open files" of this process; undefined where it cannot be read (not Linux) or is unlimited. */
export function openFileLimit(limits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | undefined {
  let text: string;
  try {
    text = limits();
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  const n = Number(soft);
  return soft !== undefined && Number.isSafeInteger(n) ? n : undefined;
}

/** About how many descriptors the daemon needs besides its HTTP connections. */
export function descriptorsBesidesHttp(config: SmppdConfig): number {
  const binds = config.upstreams.reduce((n, u) => n + u.binds, 0);
  const webhooks = config.clients.reduce((n, c) => n + (c.webhook?.concurrency ?? 0), 0);
  return BASE + binds
    // The built-in simulator holds the other end of each bind, and its own listener.
    + (config.simulator?.enabled ? binds + 1 : 0)
    + webhooks
    + (config.store.kind === 'postgres' ? POSTGRES : 0)
    + (config.amqp ? AMQP : 0)
    + (config.metrics?.listen ? METRICS : 0);
}

/** Logs a warning when http.maxConnections and the daemon's other descriptors exceed `limit`; returns whether it did. */
export function warnIfOpenFilesShort(config: SmppdConfig, log: Log, limit: number | undefined = openFileLimit()): boolean {
  if (limit === undefined) return false;
  const others = descriptorsBesidesHttp(config);
  const max = config.http.maxConnections;
  if (max + others <= limit) return false;
  log.warn(
    { event: 'open_files_short', maxConnections: max, otherDescriptors: others, openFileLimit: limit },
    `http.maxConnections (${max}) and about ${others} descriptors for binds, webhooks and the store exceed the process's open-file limit (${limit}): `
      + `a flood of connections could leave no descriptor for a bind or a webhook. Lower http.maxConnections to at most ${Math.max(1, limit - others)}, `
      + 'or raise the limit (systemd: LimitNOFILE=)',
  );
  return true;
}
