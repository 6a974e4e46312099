/**
 * What the daemon benchmark reads about other processes (Linux /proc) and how it waits for
 * them. /proc/<pid>/stat counts CPU in clock ticks (`getconf CLK_TCK`, 100 on Linux).
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { round } from './stats.js';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * /proc/<pid>/stat: the command name (field 2) and the fields after it, `fields[0]` being field 3
 * (state), `fields[1]` the ppid, `fields[11..14]` utime, stime, cutime, cstime. Throws when the
 * process is gone.
 */
export function readProcStat(pid: number): { comm: string; fields: string[] } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name is in parentheses and may hold spaces: count fields after the last ')'.
  const close = stat.lastIndexOf(')');
  return { comm: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
}

/** User + system CPU the process has used so far, in µs (resolution: one clock tick, 10 ms). */
export function processCpuUs(pid: number): number {
  const { fields } = readProcStat(pid);
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / clockTicks();
}

/**
 * µs the process's main thread has spent runnable but waiting for a core (the second field of
 * /proc/<pid>/schedstat): the sign of a machine with more work than cores.
 */
export function processRunQueueWaitUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ');
  return Number(fields[1]) / 1000;
}

/** CPU every process on the machine has used so far (all cores, /proc/stat), µs. */
export function machineBusyUs(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1e6) / clockTicks();
}

/** The process's peak resident set (VmHWM) in MB. */
export function processPeakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** What a meter's reading amounts to: % of one core over its wall time (a machine of two cores: of 200), whole. */
export function percentOfCore(e: { cpuUs: number; wallMs: number }): number {
  return round((e.cpuUs / (e.wallMs * 1000)) * 100, 0);
}

/** A counter of µs (CPU, waiting) read now and again: how much it grew, against the wall clock. */
export class CpuMeter {
  #cpuUs: number;
  #wallMs: number;

  constructor(private readonly read: () => number) {
    this.#cpuUs = read();
    this.#wallMs = performance.now();
  }

  /** CPU µs and wall ms since construction (or the last `restart`). */
  elapsed(): { cpuUs: number; wallMs: number } {
    return { cpuUs: this.read() - this.#cpuUs, wallMs: performance.now() - this.#wallMs };
  }

  restart(): void {
    this.#cpuUs = this.read();
    this.#wallMs = performance.now();
  }

  static ofPid(pid: number): CpuMeter {
    return new CpuMeter(() => processCpuUs(pid));
  }

  static waitOfPid(pid: number): CpuMeter {
    return new CpuMeter(() => processRunQueueWaitUs(pid));
  }

  static ofMachine(): CpuMeter {
    return new CpuMeter(machineBusyUs);
  }

  static ofSelf(): CpuMeter {
    return new CpuMeter(() => {
      const u = process.cpuUsage();
      return u.user + u.system;
    });
  }
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Resolves with the exit code (null after a signal) once the child has exited. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
