import { parseArgs } from 'node:util';
import { SystemClock } from '../core/clock.js';
import { loadConfigFile } from '../config/load.js';
import type { SmppdConfig } from '../config/schema.js';
import { asLog, createLogger, flushLogSync } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import type { Pool } from '../smpp/pool.js';
import { startDaemon, type RunningDaemon } from './daemon.js';

const USAGE = `Usage: smppd start --config FILE

Runs the daemon: the store, the bind pool of every upstream, the dispatcher and the HTTP API
(http.listen). With 'simulator.enabled' in the config, the built-in SMSC simulator runs in the
same process (the demo: npm start).
SIGTERM/SIGINT stop it gracefully (drain, unbind); a second signal exits at once. SIGHUP reloads
clients, tokens and rate limits from the file, and opens the records file (records.path) again.
An exception or a promise rejection nothing handled is logged (one line, level fatal, event
'fatal') and ends the process. Exit codes: 0 stopped; 1 failed while running (the store, or a
fault); 2 usage; 78 the configuration does not load.`;

/**
 * sysexits.h EX_CONFIG: the configuration does not load. systemd's unit lists it in
 * RestartPreventExitStatus, so a bad file is not retried every few seconds; a store or
 * runtime failure (exit 1) is.
 */
export const EXIT_CONFIG = 78;

export async function runStart(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.config) {
    console.error(`smppd start: --config FILE is required\n\n${USAGE}`);
    return 2;
  }
  let config: SmppdConfig;
  try {
    config = await loadConfigFile(values.config, process.env);
  } catch (e) {
    console.error(`smppd: ${(e as Error).message}`);
    return EXIT_CONFIG;
  }
  return runDaemon(config, values.config);
}

/**
 * An exception nothing caught, or a rejection nothing handled, leaves the process in a state nobody
 * can vouch for (a timer chain broken, a bind's state half-changed): rather than run on half-alive,
 * it writes one fatal line, flushed, and exits 1, and the service manager (Restart=on-failure)
 * starts a fresh one. What was committed survives; what was not was not answered either.
 */
function exitOnUnhandled(logger: ReturnType<typeof createLogger>): void {
  let exiting = false;
  const fail = (err: unknown, origin: 'uncaughtException' | 'unhandledRejection'): void => {
    if (exiting) return;
    exiting = true;
    try {
      logger.fatal({ event: 'fatal', origin, err }, origin === 'uncaughtException'
        ? 'an exception nothing caught: exiting so that a fresh process starts'
        : 'a promise rejection nothing handled: exiting so that a fresh process starts');
      flushLogSync(logger);
    } finally {
      process.exit(1);
    }
  };
  process.on('uncaughtException', (err, origin) => fail(err, origin));
  process.on('unhandledRejection', (reason) => fail(reason, 'unhandledRejection'));
}

async function runDaemon(config: SmppdConfig, configPath: string): Promise<number> {
  const logger = createLogger(config.log.level);
  exitOnUnhandled(logger);
  const log = asLog(logger);
  const clock = new SystemClock();
  let pool: Pool | undefined;
  let daemon: RunningDaemon | undefined;
  const metrics = new Metrics(() => pool?.stats() ?? [], {
    readOutbox: async () => (await daemon?.outboxDepth()) ?? [],
    readQueue: async () => (await daemon?.queue()) ?? { queued: 0, inflight: 0, parked: 0 },
    readUpstreams: () => daemon?.upstreams() ?? [],
    readAccounts: () => pool?.accountStats() ?? [],
    ...(config.records ? { readRecords: async () => (await daemon?.pendingRecords()) ?? 0 } : {}),
  });

  try {
    daemon = await startDaemon(config, {
      clock, log, metrics, onPool: (p) => { pool = p; },
      // Nothing can be stored any more: exit non-zero so systemd (Restart=on-failure) starts a fresh process.
      onFatal: () => {
        flushLogSync(logger);
        process.exit(1);
      },
    });
  } catch (e) {
    log.error({ event: 'start_failed', err: e }, 'smppd could not start');
    logger.flush();
    return 1;
  }
  const running = daemon;
  log.info({ event: 'started', http: daemon.http, upstreams: config.upstreams.map((u) => ({ name: u.name, binds: u.binds })) }, 'smppd started');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log.warn({ event: 'second_signal', signal }, 'second signal: exiting at once');
        flushLogSync(logger);
        process.exit(130);
      }
      stopping = true;
      log.info({ event: 'stopping', signal, drainSeconds: config.shutdown.drainSeconds }, 'stopping: no new work, draining outstanding requests, then unbinding');
      void running.stop().then(() => {
        log.info({ event: 'stopped' }, 'smppd stopped');
        logger.flush();
        resolve(0);
      }, (e: unknown) => {
        log.error({ event: 'stop_failed', err: e }, 'smppd did not stop cleanly');
        logger.flush();
        resolve(1);
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // SIGHUP: clients, tokens and rate limits again from the file, with their maxQueued and weight;
    // binds, queue and webhooks carry on. A file that no longer loads changes nothing (the problems are logged).
    // The records file is opened again whatever the file holds: logrotate has moved it.
    process.on('SIGHUP', () => {
      if (stopping) return;
      running.reopenRecords();
      void loadConfigFile(configPath, process.env).then((next) => {
        running.reloadClients(next.clients);
        running.reloadAdmins(next.admin);
        if ((next.admin === undefined) !== (config.admin === undefined)) {
          log.warn({ event: 'reload_partial' }, 'the admin section was added or removed: the admin API turns on or off at the next restart');
        }
        const hooks = (c: SmppdConfig): string => JSON.stringify(c.clients.map((x) => [x.name, x.webhook?.url ?? null, x.inboundNumbers ?? null]));
        if (hooks(next) !== hooks(config)) {
          log.warn({ event: 'reload_partial' }, 'webhooks and inbound numbers changed in the file: they take effect at the next restart');
        }
      }, (e: unknown) => {
        log.error({ event: 'reload_failed', problems: (e as { details?: { problems?: string[] } }).details?.problems ?? [(e as Error).message] },
          'SIGHUP: the configuration does not load; nothing changed');
      });
    });
  });
}
