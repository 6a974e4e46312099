/**
 * CPU of the servers the scale-out benchmark runs against (PostgreSQL, RabbitMQ), read from
 * Linux /proc like the daemon's. A server is a tree of processes: the postmaster forks a backend
 * per connection, beam.smp has helpers. A tree's CPU is its root's own and reaped children's
 * (utime, stime, cutime, cstime of /proc/<pid>/stat), plus its live descendants': a backend that
 * exits in the measured part moves from the second sum to the first, one born in it counts from
 * its birth. Only servers on this machine can be read: a remote URL gives no figure.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { CpuMeter, readProcStat } from './proc.js';

interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime + cutime + cstime, clock ticks. */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  let stat: ReturnType<typeof readProcStat>;
  try {
    stat = readProcStat(pid);
  } catch {
    return undefined; // gone since the listing
  }
  const f = stat.fields;
  return { pid, comm: stat.comm, ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
}

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  return out;
}

/**
 * The roots of the process trees whose command is `comm` (`postgres`, `beam.smp`): such
 * processes whose parent is not one. More than one when several servers of the kind run here.
 */
export function serverRoots(comm: string): number[] {
  const stats = allStats();
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  return stats.filter((s) => s.comm === comm && byPid.get(s.ppid)?.comm !== comm).map((s) => s.pid);
}

/** The highest ancestor of `pid` (itself included) named `comm`: a forked child may hold its parent's listening socket. */
function topOfKind(pid: number, comm: string): number {
  let top = pid;
  for (let s = readStat(pid); s; s = readStat(s.ppid)) {
    if (s.comm !== comm) break;
    top = s.pid;
    if (s.ppid <= 1) break;
  }
  return top;
}

/** CPU µs used so far by the trees under `roots` (reaped children included). */
export function treeCpuUs(roots: readonly number[]): number {
  const stats = allStats();
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) {
    const list = children.get(s.ppid);
    if (list) list.push(s);
    else children.set(s.ppid, [s]);
  }
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  let ticks = 0;
  const stack = roots.filter((pid) => byPid.has(pid));
  while (stack.length > 0) {
    const pid = stack.pop()!;
    ticks += byPid.get(pid)!.ticks;
    for (const c of children.get(pid) ?? []) stack.push(c.pid);
  }
  return ticks * tickUs();
}

let oneTickUs: number | undefined;

/** One clock tick in µs (`getconf CLK_TCK`, 100 on Linux), as proc.ts reads it. */
function tickUs(): number {
  if (oneTickUs === undefined) {
    let perSecond = 100;
    try {
      perSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      // keep 100
    }
    oneTickUs = 1e6 / perSecond;
  }
  return oneTickUs;
}

/** The default port of a URL's scheme, for the servers the bench meters. */
const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'amqp:': 5672, 'amqps:': 5671 };

/** Whether `url`'s host is this machine (its server processes can be read in /proc). */
export function isLocalUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === '' || host === 'localhost' || host === '::1' || host.startsWith('127.');
  } catch {
    return false;
  }
}

/**
 * The process named `comm` that listens on TCP `port` (/proc/net/tcp and tcp6, then the
 * socket among the processes' open files; other users' files need root), or undefined.
 */
export function listenerPid(port: number, comm: string): number | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; field 9 is the socket's inode.
      if (f[3] === '0A' && parseInt(f[1]?.split(':').pop() ?? '', 16) === port && f[9]) inodes.add(`socket:[${f[9]}]`);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const s of allStats()) {
    if (s.comm !== comm) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${s.pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${s.pid}/fd/${fd}`))) return s.pid;
      } catch {
        // closed since the listing
      }
    }
  }
  return undefined;
}

/**
 * A meter of the server behind `url` and its child processes: the process named `comm` that
 * listens on the URL's port, or, when that cannot be seen, the one tree of such processes if
 * there is exactly one. Undefined when the server is elsewhere or cannot be told apart (a
 * second RabbitMQ's beam.smp, say, or a `rabbitmqctl`, which is a beam.smp too).
 */
export function serverMeter(comm: string, url: string): { meter: CpuMeter; pids: number[] } | undefined {
  if (!isLocalUrl(url)) return undefined;
  let port: number;
  try {
    const u = new URL(url);
    port = u.port === '' ? DEFAULT_PORTS[u.protocol] ?? NaN : Number(u.port);
  } catch {
    return undefined;
  }
  const listener = listenerPid(port, comm);
  const roots = listener !== undefined ? [topOfKind(listener, comm)] : serverRoots(comm);
  if (roots.length !== 1) return undefined;
  return { meter: new CpuMeter(() => treeCpuUs(roots)), pids: roots };
}
