import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SystemClock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import type { BehaviourPatch } from '../simulator/behaviour.js';
import { isReceiptRouting, RECEIPT_ROUTINGS } from '../simulator/receipt-routing.js';
import { SmscSimulator } from '../simulator/simulator.js';
import type { SimulatorOptions } from '../simulator/options.js';

const USAGE = `Usage: smppd simulate [options]

Runs the built-in SMSC simulator: an SMPP v3.4 server for demos, tests and the benchmark.
Prints {"event":"listening",...} as one JSON line when ready; on SIGINT/SIGTERM stops and
prints the final counters as one JSON line.

Options:
  --host HOST                 listen address (default 127.0.0.1)
  --port N                    SMPP port, 0 = any free port (default 2775)
  --system-id ID              the account's system_id (default smppclient1)
  --password PW               the account's password (default password)
  --tls-cert FILE             PEM certificate; with --tls-key, serve TLS instead of plain TCP
  --tls-key FILE              PEM private key
  --status-port N             HTTP status endpoint on 127.0.0.1 (GET /status, POST /behaviour,
                              /drop, /reset); 0 = none (default 0)
  --response-delay-ms N       delay before each submit_sm_resp (default 0)
  --throttle-rate N           submit_sm per second per bind before ESME_RTHROTTLED, 0 = off (default 0)
  --throttle-burst N          tokens the per-bind throttle saves up (default rate / 50, at least 1)
  --account-throttle-rate N   submit_sm per second shared by all binds of the account before
                              ESME_RTHROTTLED, 0 = off (default 0)
  --account-throttle-burst N  tokens the account's throttle saves up (default rate / 50, at least 1)
  --receipt-delay-ms N        delay from submit_sm_resp to the delivery receipt (default 500)
  --no-receipts               never send delivery receipts
  --receipt-routing R         which bind of the account a receipt goes to (default same):
                              same (the submitting bind), any (round-robin), or
                              other-system-type (a bind whose bind carried another system_type,
                              i.e. another daemon instance; else as same)
  --message-id-format F       hex | decimal (default hex)
  -h, --help                  this text`;

/** Where the command writes; the defaults are the process's streams and signals. */
export interface SimulateIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Stops the simulator when aborted, as SIGINT/SIGTERM do. */
  signal?: AbortSignal;
}

const processIo: SimulateIo = {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/** JSON lines on stderr at warn and above (pino is wired in by the daemon, not here). */
function stderrLog(write: (line: string) => void, bound: object = {}): Log {
  const emit = (level: string) => (fields: object, msg: string): void =>
    write(JSON.stringify({ level, time: new Date().toISOString(), ...bound, ...fields, msg }));
  return {
    error: emit('error'),
    warn: emit('warn'),
    info: () => {},
    debug: () => {},
    child: (fields) => stderrLog(write, { ...bound, ...fields }),
  };
}

class UsageError extends Error {}

function count(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number ≥ 0, got '${value}'`);
  return n;
}

function parse(argv: string[]): { help: true } | { help: false; options: SimulatorOptions; statusPort: number } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'system-id': { type: 'string' },
      password: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'status-port': { type: 'string' },
      'response-delay-ms': { type: 'string' },
      'throttle-rate': { type: 'string' },
      'throttle-burst': { type: 'string' },
      'account-throttle-rate': { type: 'string' },
      'account-throttle-burst': { type: 'string' },
      'receipt-delay-ms': { type: 'string' },
      'no-receipts': { type: 'boolean' },
      'receipt-routing': { type: 'string' },
      'message-id-format': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true };
  const format = values['message-id-format'] ?? 'hex';
  if (format !== 'hex' && format !== 'decimal') throw new UsageError(`--message-id-format must be hex or decimal, got '${format}'`);
  const routing = values['receipt-routing'] ?? 'same';
  if (!isReceiptRouting(routing)) throw new UsageError(`--receipt-routing must be one of ${RECEIPT_ROUTINGS.join(', ')}, got '${routing}'`);
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const behaviour: BehaviourPatch = {
    responseDelayMs: count('response-delay-ms', values['response-delay-ms'], 0),
    throttleRatePerBind: count('throttle-rate', values['throttle-rate'], 0),
    throttleBurst: count('throttle-burst', values['throttle-burst'], 0),
    throttleRatePerAccount: count('account-throttle-rate', values['account-throttle-rate'], 0),
    throttleAccountBurst: count('account-throttle-burst', values['account-throttle-burst'], 0),
    messageIdFormat: format,
    receiptRouting: routing,
    receipts: {
      enabled: !values['no-receipts'],
      delayMs: count('receipt-delay-ms', values['receipt-delay-ms'], 500),
    },
  };
  const options: SimulatorOptions = {
    host: values.host ?? '127.0.0.1',
    port: count('port', values.port, 2775),
    accounts: [{ systemId: values['system-id'] ?? 'smppclient1', password: values.password ?? 'password' }],
    behaviour,
  };
  if (values['tls-cert'] !== undefined && values['tls-key'] !== undefined) {
    options.tls = { cert: readFileSync(values['tls-cert']), key: readFileSync(values['tls-key']) };
  }
  return { help: false, options, statusPort: count('status-port', values['status-port'], 0) };
}

function waitForStop(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const done = (why: string): void => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      signal?.removeEventListener('abort', onAbort);
      resolve(why);
    };
    const onInt = (): void => done('SIGINT');
    const onTerm = (): void => done('SIGTERM');
    const onAbort = (): void => done('abort');
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
    if (signal?.aborted) return done('abort');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `smppd simulate`: resolves to the exit code once stopped by a signal. */
export async function runSimulate(argv: string[], io: SimulateIo = processIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    io.stderr(`smppd simulate: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  const log = stderrLog(io.stderr).child({ component: 'simulator' });
  const sim = new SmscSimulator(parsed.options, new SystemClock(), log);
  try {
    const { port } = await sim.start();
    const statusPort = parsed.statusPort > 0 ? (await sim.startStatusServer(parsed.statusPort)).port : null;
    io.stdout(JSON.stringify({ event: 'listening', host: parsed.options.host, port, statusPort, tls: parsed.options.tls !== undefined }));
  } catch (e) {
    await sim.stop();
    io.stderr(`smppd simulate: ${(e as Error).message}`);
    return 1;
  }
  const why = await waitForStop(io.signal);
  await sim.stop();
  io.stdout(JSON.stringify({ event: 'stopped', reason: why, counters: sim.counters() }));
  return 0;
}
