/**
 * The processes under test for the daemon benchmarks: `smppd simulate` in one process and
 * `smppd start` in another (or several: the scale-out cases), bound to it over loopback TCP.
 * `DaemonUnderTest` is one of each with its own temporary folder for the config and the SQLite
 * store. Stopped with SIGTERM (the daemon drains and exits 0).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DelaySpec, SimulatorCounters } from '../../src/simulator/index.js';
import type { BenchCleanup } from './cleanup.js';
import type { HttpTarget } from './load.js';
import { smppdMain } from './paths.js';
import { exitOf, freePort, processPeakRssMb, sleep } from './proc.js';
import { DAEMON_NODE_FLAGS } from '../../src/cli/node-flags.js';

/**
 * Node options of the daemon process: the flags smppd is deployed with, then any from the
 * environment, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to explain a result (a later flag wins).
 */
const DAEMON_NODE_ARGS = [...DAEMON_NODE_FLAGS, ...(process.env['SMPPD_BENCH_DAEMON_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '')];

export interface DaemonSetup {
  binds: number;
  /** submit_sm per second per bind; 0 = unpaced. */
  ratePerBind: number;
  /** The simulator's receipts: false = none; else the delay from submit_sm_resp to the receipt. */
  receipts: false | DelaySpec;
  /** limits.maxQueued. Default 1,000,000: the benchmark measures throughput, not the 429 limit. */
  maxQueued?: number;
}

interface LogLine {
  level?: string;
  event?: string;
  port?: number;
  connection?: string;
  msg?: string;
}

/** How long the daemon may take to listen, bind every session and (with amqp) consume. */
const READY_TIMEOUT_MS = 20_000;
/** How long a SIGTERM'd daemon may take to drain (drainSeconds is 10) before it is killed. */
const STOP_TIMEOUT_MS = 30_000;

/** The daemon under test and its own simulator, in one temporary folder (config and SQLite store). */
export class DaemonUnderTest {
  #stopped: Promise<number | null> | undefined;

  private constructor(
    readonly dir: string,
    readonly storePath: string,
    private readonly daemon: DaemonProcess,
    private readonly simulator: SimulatorProcess,
  ) {}

  get pid(): number {
    return this.daemon.pid;
  }

  get simulatorPid(): number {
    return this.simulator.pid;
  }

  get http(): HttpTarget {
    return this.daemon.http;
  }

  /** Warn and error lines the daemon logged (the first 20). */
  get warnings(): string[] {
    return this.daemon.warnings;
  }

  /** How many warn and error lines the daemon logged in all. */
  get warningCount(): number {
    return this.daemon.warningCount;
  }

  static async start(setup: DaemonSetup): Promise<DaemonUnderTest> {
    const dir = mkdtempSync(join(tmpdir(), 'smppd-bench-'));
    let simulator: SimulatorProcess | undefined;
    try {
      simulator = await SimulatorProcess.start(setup.receipts);
      const storePath = join(dir, 'smppd.db');
      const daemon = await DaemonProcess.start({
        dir, simulatorPort: simulator.port, binds: setup.binds, ratePerBind: setup.ratePerBind,
        ...(setup.maxQueued !== undefined ? { maxQueued: setup.maxQueued } : {}),
        store: { path: storePath, fsync: false },
      });
      return new DaemonUnderTest(dir, storePath, daemon, simulator);
    } catch (e) {
      await simulator?.kill();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The simulator's counters (GET /status). */
  simulatorCounters(): Promise<SimulatorCounters> {
    return this.simulator.counters();
  }

  /** The daemon's peak RSS so far, MB. */
  peakRssMb(): number {
    return this.daemon.peakRssMb();
  }

  /** SIGTERM to the daemon, then to the simulator; resolves with the daemon's exit code. */
  stop(): Promise<number | null> {
    this.#stopped ??= (async () => {
      const code = await this.daemon.stop();
      await this.simulator.stop();
      return code;
    })();
    return this.#stopped;
  }

  /** Deletes the temporary folder (config, store, WAL). */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** `smppd simulate` in its own process, on a free loopback port (account smppclient1/password). */
export class SimulatorProcess {
  private constructor(private readonly child: ChildProcess, readonly port: number, private readonly statusPort: number) {}

  get pid(): number {
    return this.child.pid!;
  }

  /** `receipts`: false = none; else the delay from submit_sm_resp to the receipt. `cleanup`: lists the process there until it exits. */
  static async start(receipts: false | DelaySpec, cleanup?: BenchCleanup): Promise<SimulatorProcess> {
    const statusPort = await freePort();
    const simArgs = ['simulate', '--port', '0', '--status-port', String(statusPort)];
    if (receipts === false) simArgs.push('--no-receipts');
    else if (typeof receipts === 'number') simArgs.push('--receipt-delay-ms', String(receipts));
    const child = spawn(process.execPath, [smppdMain, ...simArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    listUntilExit(child, 'the simulator', cleanup);
    try {
      const listening = await nextJsonLine<{ port: number }>(child, (l) => typeof (l as { port?: unknown }).port === 'number', 10_000);
      if (typeof receipts === 'object') await postJson(statusPort, '/behaviour', { receipts: { delayMs: receipts } });
      return new SimulatorProcess(child, listening.port, statusPort);
    } catch (e) {
      child.kill('SIGKILL');
      await exitOf(child);
      throw e;
    }
  }

  /** The counters (GET /status). */
  async counters(): Promise<SimulatorCounters> {
    const res = await fetch(`http://127.0.0.1:${this.statusPort}/status`);
    return (await res.json()) as SimulatorCounters;
  }

  /** SIGTERM, and SIGKILL after 5 s. */
  async stop(): Promise<void> {
    await stopChild(this.child, 5_000);
  }

  /** SIGKILL (a case that failed). */
  kill(): Promise<void> {
    return killChild(this.child);
  }
}

export interface DaemonProcessSetup {
  /** Where the config file is written (`<name>.yaml`); the daemon's working folder. */
  dir: string;
  /** The simulator's SMPP port on 127.0.0.1 (account smppclient1/password). */
  simulatorPort: number;
  binds: number;
  /** submit_sm per second per bind; 0 = unpaced. */
  ratePerBind: number;
  /** limits.maxQueued. Default 1,000,000: the benchmark measures throughput, not the 429 limit. */
  maxQueued?: number;
  /** The `store` section, as written to the config. */
  store: Record<string, unknown>;
  /** The `amqp` section; with it, the daemon is ready once its queue consumer is up. Default none. */
  amqp?: Record<string, unknown>;
  /** The config file's name, without .yaml. Default smppd. */
  name?: string;
  /** The bearer token of client `bench`. Default a random one. */
  token?: string;
  /** Lists the process here from its spawn until it exits (an interrupted run kills it). Default none. */
  cleanup?: BenchCleanup;
}

/** `smppd start` in its own process, with client `bench` and one upstream `sim`; started once ready. */
export class DaemonProcess {
  /** Warn and error lines the daemon logged (the first 20), and how many in all. */
  readonly warnings: string[] = [];
  warningCount = 0;
  #stopped: Promise<number | null> | undefined;

  private constructor(private readonly child: ChildProcess, readonly http: HttpTarget) {}

  get pid(): number {
    return this.child.pid!;
  }

  static async start(s: DaemonProcessSetup): Promise<DaemonProcess> {
    const token = s.token ?? `bench-${randomBytes(16).toString('hex')}`;
    const configPath = join(s.dir, `${s.name ?? 'smppd'}.yaml`);
    // JSON is YAML: no quoting to get wrong.
    writeFileSync(configPath, JSON.stringify({
      log: { level: 'info' },
      http: { listen: '127.0.0.1:0' },
      clients: [{ name: 'bench', token }],
      store: s.store,
      limits: { maxQueued: s.maxQueued ?? 1_000_000 },
      upstreams: [{
        name: 'sim', host: '127.0.0.1', port: s.simulatorPort, tls: false, systemId: 'smppclient1', password: 'password',
        binds: s.binds, window: 100, ratePerBind: s.ratePerBind,
      }],
      ...(s.amqp ? { amqp: s.amqp } : {}),
    }, null, 2));
    const child = spawn(process.execPath, [...DAEMON_NODE_ARGS, smppdMain, 'start', '--config', configPath], { cwd: s.dir, stdio: ['ignore', 'pipe', 'inherit'] });
    listUntilExit(child, `daemon ${s.name ?? 'smppd'}`, s.cleanup);
    const d = new DaemonProcess(child, { port: 0, token });
    try {
      d.http.port = await d.#ready(s.binds, s.amqp !== undefined);
      return d;
    } catch (e) {
      child.kill('SIGKILL');
      await exitOf(child);
      throw e;
    }
  }

  /** The peak RSS so far, MB. */
  peakRssMb(): number {
    return processPeakRssMb(this.pid);
  }

  /** How the process ended (`code N` or the signal), or null while it runs. */
  get ended(): string | null {
    if (this.child.exitCode !== null) return `code ${this.child.exitCode}`;
    return this.child.signalCode ?? null;
  }

  /** SIGTERM (the daemon drains), and SIGKILL after 30 s; resolves with the exit code (null: killed). */
  stop(): Promise<number | null> {
    this.#stopped ??= stopChild(this.child, STOP_TIMEOUT_MS);
    return this.#stopped;
  }

  /** SIGKILL (a case that failed). */
  kill(): Promise<void> {
    return killChild(this.child);
  }

  /** Reads the log until the daemon listens, every bind is up and (`consuming`) the queue consumer is; keeps reading for warnings. */
  #ready(binds: number, consuming: boolean): Promise<number> {
    return new Promise((resolvePort, reject) => {
      let port: number | undefined;
      let bound = 0;
      let consumer = !consuming;
      const timer = setTimeout(() => reject(new Error(`the daemon was not ready within ${READY_TIMEOUT_MS} ms (HTTP port ${port ?? 'unknown'}, ${bound}/${binds} binds up${consuming ? `, queue consumer ${consumer ? 'up' : 'not up'}` : ''})`)), READY_TIMEOUT_MS);
      const settle = (): void => {
        if (port === undefined || bound < binds || !consumer) return;
        clearTimeout(timer);
        resolvePort(port);
      };
      createInterface({ input: this.child.stdout! }).on('line', (text) => {
        let line: LogLine;
        try {
          line = JSON.parse(text) as LogLine;
        } catch {
          return;
        }
        if (line.event === 'http_listening' && typeof line.port === 'number') port = line.port;
        if (line.event === 'bound') bound++;
        if (line.event === 'amqp_connected' && line.connection === 'smppd ingress') consumer = true;
        if (line.level === 'warn' || line.level === 'error' || line.level === 'fatal') {
          this.warningCount++;
          if (this.warnings.length < 20) this.warnings.push(text.slice(0, 400));
        }
        settle();
      });
      this.child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the daemon exited with ${code} before it was ready`));
      });
    });
  }
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  child.kill('SIGKILL');
  await exitOf(child);
}

/** From the spawn, so that a process still starting is killed too; its exit takes it off the list (the kill then finds it gone). */
export function listUntilExit(child: ChildProcess, what: string, cleanup: BenchCleanup | undefined): void {
  if (!cleanup) return;
  const kill = cleanup.add(`${what} (pid ${child.pid})`, () => killChild(child));
  child.once('exit', () => void kill());
}

/** SIGTERM, and SIGKILL after `timeoutMs`; resolves to its exit code (null when killed). */
export async function stopChild(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const code = await Promise.race([exitOf(child), sleep(timeoutMs).then(() => 'timeout' as const)]);
  if (code !== 'timeout') return code;
  child.kill('SIGKILL');
  await exitOf(child);
  return null;
}

function nextJsonLine<T>(child: ChildProcess, wanted: (line: unknown) => boolean, timeoutMs: number): Promise<T> {
  return new Promise((resolveLine, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`no ready line from the process within ${timeoutMs} ms`)), timeoutMs);
    lines.on('line', (text) => {
      try {
        const line = JSON.parse(text) as unknown;
        if (!wanted(line)) return;
        clearTimeout(timer);
        resolveLine(line as T);
      } catch {
        // not JSON: ignore
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the process exited with ${code} before it was ready`));
    });
  });
}

async function postJson(port: number, path: string, body: unknown): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${path} answered ${res.status}: ${await res.text()}`);
}
