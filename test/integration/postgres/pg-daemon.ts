/**
 * `startDaemon` as one of several instances on one PostgreSQL schema: a folder of its own, logs
 * silent, HTTP on a free port, one client `app`, and `upstream` (a YAML flow map) as its only
 * upstream. Stopped (and its folder removed) by `cleanups` after the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import type { Metrics } from '../../../src/observability/metrics.js';
import type { Pool } from '../../../src/smpp/pool.js';
import { PG_URL } from './pg-store.js';

export interface PgDaemonOptions {
  schema: string;
  instanceId: string;
  token: string;
  upstream: string;
  metrics?: Metrics;
  onPool?: (pool: Pool) => void;
}

export async function startPgDaemon(cleanups: Array<() => Promise<void> | void>, o: PgDaemonOptions): Promise<RunningDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-pg-daemon-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: app, token: ${o.token} }]`,
    `store: { kind: postgres, url: "${PG_URL}", schema: ${o.schema}, instanceId: ${o.instanceId} }`,
    `upstreams: [${o.upstream}]`,
    '',
  ].join('\n'), dir);
  const d = await startDaemon(config, {
    clock: new SystemClock(), log: silentLog, ...(o.metrics ? { metrics: o.metrics } : {}), ...(o.onPool ? { onPool: o.onPool } : {}),
  });
  cleanups.push(() => d.stop()); // a second stop waits for the first
  return d;
}
