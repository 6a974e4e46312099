/**
 * The daemon under test for the daemon benchmark: `smppd simulate` in one process and
 * `smppd start` in another, bound to it over loopback TCP, with its own temporary folder for
 * the config and the store. Stopped with SIGTERM (the daemon drains and exits 0).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { DelaySpec } from '../simulator/behaviour.js';
import type { SimulatorCounters } from '../simulator/counters.js';
import type { HttpTarget } from './bench-load.js';
import { exitOf, freePort, processPeakRssMb, sleep } from './bench-proc.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const mainJs = join(root, 'dist/src/main.js');

/** Node options for the daemon process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to explain a result. */
const DAEMON_NODE_ARGS = (process.env['SMPPD_BENCH_DAEMON_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');

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
  msg?: string;
}

/** How long the daemon may take to listen and bind every session. */
const READY_TIMEOUT_MS = 20_000;
/** How long a SIGTERM'd daemon may take to drain (drainSeconds is 10) before it is killed. */
const STOP_TIMEOUT_MS = 30_000;

export class DaemonUnderTest {
  /** Warn and error lines the daemon logged (the first 20), and how many in all. */
  readonly warnings: string[] = [];
  warningCount = 0;
  #stopped: Promise<number | null> | undefined;

  private constructor(
    readonly dir: string,
    readonly storePath: string,
    readonly http: HttpTarget,
    private readonly daemon: ChildProcess,
    private readonly simulator: ChildProcess,
    private readonly statusPort: number,
  ) {}

  get pid(): number {
    return this.daemon.pid!;
  }

  get simulatorPid(): number {
    return this.simulator.pid!;
  }

  static async start(setup: DaemonSetup): Promise<DaemonUnderTest> {
    const dir = mkdtempSync(join(tmpdir(), 'smppd-bench-'));
    const statusPort = await freePort();
    const simArgs = ['simulate', '--port', '0', '--status-port', String(statusPort)];
    if (setup.receipts === false) simArgs.push('--no-receipts');
    else if (typeof setup.receipts === 'number') simArgs.push('--receipt-delay-ms', String(setup.receipts));
    const simulator = spawn(process.execPath, [mainJs, ...simArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let daemon: ChildProcess | undefined;
    try {
      const listening = await nextJsonLine<{ port: number }>(simulator, (l) => typeof (l as { port?: unknown }).port === 'number', 10_000);
      if (typeof setup.receipts === 'object') await postJson(statusPort, '/behaviour', { receipts: { delayMs: setup.receipts } });

      const token = `bench-${randomBytes(16).toString('hex')}`;
      const storePath = join(dir, 'smppd.db');
      const configPath = join(dir, 'smppd.yaml');
      // JSON is YAML: no quoting to get wrong.
      writeFileSync(configPath, JSON.stringify({
        log: { level: 'info' },
        http: { listen: '127.0.0.1:0' },
        clients: [{ name: 'bench', token }],
        store: { path: storePath, fsync: false },
        limits: { maxQueued: setup.maxQueued ?? 1_000_000 },
        upstreams: [{
          name: 'sim', host: '127.0.0.1', port: listening.port, tls: false, systemId: 'smppclient1', password: 'password',
          binds: setup.binds, window: 100, ratePerBind: setup.ratePerBind,
        }],
      }, null, 2));
      daemon = spawn(process.execPath, [...DAEMON_NODE_ARGS, mainJs, 'start', '--config', configPath], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
      const d = new DaemonUnderTest(dir, storePath, { port: 0, token }, daemon, simulator, statusPort);
      d.http.port = await d.#ready(setup.binds);
      return d;
    } catch (e) {
      for (const child of [daemon, simulator]) {
        if (!child) continue;
        child.kill('SIGKILL');
        await exitOf(child);
      }
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The simulator's counters (GET /status). */
  async simulatorCounters(): Promise<SimulatorCounters> {
    const res = await fetch(`http://127.0.0.1:${this.statusPort}/status`);
    return (await res.json()) as SimulatorCounters;
  }

  /** The daemon's peak RSS so far, MB. */
  peakRssMb(): number {
    return processPeakRssMb(this.pid);
  }

  /** SIGTERM to the daemon, then to the simulator; resolves with the daemon's exit code. */
  stop(): Promise<number | null> {
    this.#stopped ??= (async () => {
      const code = await stopChild(this.daemon, STOP_TIMEOUT_MS);
      await stopChild(this.simulator, 5_000);
      return code;
    })();
    return this.#stopped;
  }

  /** Deletes the temporary folder (config, store, WAL). */
  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Reads the daemon's log until it listens and every bind is up; keeps reading for warnings. */
  #ready(binds: number): Promise<number> {
    return new Promise((resolvePort, reject) => {
      let port: number | undefined;
      let bound = 0;
      const timer = setTimeout(() => reject(new Error(`the daemon was not ready within ${READY_TIMEOUT_MS} ms (HTTP port ${port ?? 'unknown'}, ${bound}/${binds} binds up)`)), READY_TIMEOUT_MS);
      const settle = (): void => {
        if (port === undefined || bound < binds) return;
        clearTimeout(timer);
        resolvePort(port);
      };
      createInterface({ input: this.daemon.stdout! }).on('line', (text) => {
        let line: LogLine;
        try {
          line = JSON.parse(text) as LogLine;
        } catch {
          return;
        }
        if (line.event === 'http_listening' && typeof line.port === 'number') port = line.port;
        if (line.event === 'bound') bound++;
        if (line.level === 'warn' || line.level === 'error' || line.level === 'fatal') {
          this.warningCount++;
          if (this.warnings.length < 20) this.warnings.push(text.slice(0, 400));
        }
        settle();
      });
      this.daemon.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the daemon exited with ${code} before it was ready`));
      });
    });
  }
}

async function stopChild(child: ChildProcess, timeoutMs: number): Promise<number | null> {
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
