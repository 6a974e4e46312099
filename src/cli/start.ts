import { parseArgs } from 'node:util';
import { SystemClock } from '../core/clock.js';
import { loadConfigFile } from '../config/load.js';
import type { SmppdConfig } from '../config/schema.js';
import { asLog, createLogger } from '../observability/logger.js';
import { Metrics } from '../observability/metrics.js';
import { SmscSimulator } from '../simulator/simulator.js';
import { Pool } from '../smpp/pool.js';
import { upstreamSettings } from './engine-settings.js';

const USAGE = `Usage: smppd start --config FILE

Runs the daemon: binds every upstream's pool and keeps it up. With 'simulator.enabled' in the
config, the built-in SMSC simulator runs in the same process (the demo: npm start).
SIGTERM/SIGINT stop it gracefully (drain, unbind); a second signal exits at once.`;

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
    config = await loadConfigFile(values.config);
  } catch (e) {
    console.error(`smppd: ${(e as Error).message}`);
    return 1;
  }
  return runDaemon(config);
}

async function runDaemon(config: SmppdConfig): Promise<number> {
  const logger = createLogger(config.log.level);
  const log = asLog(logger);
  const clock = new SystemClock();

  let simulator: SmscSimulator | undefined;
  if (config.simulator?.enabled) {
    const s = config.simulator;
    simulator = new SmscSimulator({
      host: s.host, port: s.port,
      accounts: [{ systemId: s.systemId, password: s.password }],
      behaviour: { receipts: { delayMs: s.deliveryReceiptDelayMs } },
    }, clock, log.child({ component: 'simulator' }));
    const { port } = await simulator.start();
    log.info({ event: 'simulator_listening', host: s.host, port }, 'built-in SMSC simulator listening');
  }

  const upstreams = config.upstreams.map(upstreamSettings);
  let pool: Pool | undefined = undefined;
  const metrics = new Metrics(() => pool?.stats() ?? []);
  pool = new Pool({
    upstreams, clock, log, metrics,
    onBindState: (upstream, bind, state, detail) => log.debug({ event: 'bind_state', upstream, bind, state, detail }, 'bind state changed'),
  });
  pool.start();
  log.info({ event: 'started', upstreams: upstreams.map((u) => ({ name: u.name, binds: u.binds.length })) }, 'smppd started');

  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (stopping) {
        log.warn({ event: 'second_signal', signal }, 'second signal: exiting at once');
        process.exit(130);
      }
      stopping = true;
      log.info({ event: 'stopping', signal, drainSeconds: config.shutdown.drainSeconds }, 'stopping: draining outstanding requests, then unbinding');
      void (async () => {
        await pool.stop(config.shutdown.drainSeconds * 1000);
        await simulator?.stop();
        log.info({ event: 'stopped' }, 'smppd stopped');
        logger.flush();
        resolve(0);
      })();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  return stopped;
}
