/**
 * A RabbitMQ node of a test's own: its own node name, AMQP and distribution ports, data, logs
 * and Erlang cookie in a temporary directory, so a test may stop and start it without touching
 * the shared broker other tests use. Stopped and started again, it keeps its data directory:
 * durable queues and persistent messages survive, as on a broker restarted in production.
 *
 * Needs a RabbitMQ installation's own `rabbitmq-server` script (not the Debian wrapper in
 * /usr/sbin, which switches to the `rabbitmq` user and its directories):
 * SMPPD_TEST_RABBITMQ_SERVER, or one of the usual places. `find()` says whether there is one.
 *
 * The node runs under a small shell guard that holds a pipe from this process: when the pipe
 * closes (a stop, or this process gone, even by SIGKILL) the guard stops the node gracefully,
 * so a crashed test run leaves no broker behind.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import amqplib from 'amqplib';

/** Where RabbitMQ's own server script is installed (Debian/Ubuntu package, generic Unix tarball, Homebrew). */
const SERVER_SCRIPTS = [
  '/usr/lib/rabbitmq/bin/rabbitmq-server',
  '/usr/local/lib/rabbitmq/sbin/rabbitmq-server',
  '/opt/rabbitmq/sbin/rabbitmq-server',
  '/opt/homebrew/sbin/rabbitmq-server',
  '/usr/local/sbin/rabbitmq-server',
];

/**
 * Runs "$0" (the server script) in the background and waits for it. A watcher reads the pipe
 * from the test (fd 3, a copy of stdin: an asynchronous list gets /dev/null otherwise) and
 * sends the server SIGTERM at end of file; the server script turns SIGTERM into a graceful stop.
 */
const GUARD = [
  'exec 3<&0',
  '"$0" "$@" &',
  'server=$!',
  '( while read -r _; do :; done; kill -TERM "$server" 2>/dev/null ) <&3 >/dev/null 2>&1 &',
  'exec 3<&-',
  'wait "$server"',
].join('\n');

/** Ports outside Linux's default ephemeral range (32768–60999): no outgoing socket takes one while the node is down. */
const PORT_RANGE = { min: 20_000, max: 32_000 } as const;
/** Kept of the server's stdout and stderr, for failure messages. */
const OUTPUT_TAIL_CHARS = 6_000;

export interface QueueCounts {
  ready: number;
  unacked: number;
  consumers: number;
}

export class PrivateRabbitMQ {
  readonly #server: string;
  readonly #dir: string;
  readonly #env: NodeJS.ProcessEnv;
  #child: ChildProcessWithoutNullStreams | undefined;
  #exited: Promise<number | null> | undefined;
  #output = '';

  private constructor(server: string, dir: string, readonly nodeName: string, readonly port: number, readonly distPort: number) {
    this.#server = server;
    this.#dir = dir;
    this.#env = nodeEnv(dir, nodeName, port, distPort);
  }

  /** The server script to run, or null when RabbitMQ is not installed. */
  static find(): string | null {
    const given = process.env.SMPPD_TEST_RABBITMQ_SERVER;
    for (const path of given ? [given] : SERVER_SCRIPTS) {
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {
        // not here
      }
    }
    return null;
  }

  /** A node with a fresh data directory and free ports; not started. */
  static async create(label = 'node'): Promise<PrivateRabbitMQ> {
    const server = PrivateRabbitMQ.find();
    if (server === null) throw new Error('rabbitmq-server is not installed (set SMPPD_TEST_RABBITMQ_SERVER to its script)');
    const dir = mkdtempSync(join(tmpdir(), `smppd-rabbitmq-${label}-`));
    const port = await freeFixedPort();
    let distPort = await freeFixedPort();
    while (distPort === port) distPort = await freeFixedPort();
    return new PrivateRabbitMQ(server, dir, `smppd-test-${label}-${randomBytes(3).toString('hex')}@localhost`, port, distPort);
  }

  /** amqp://guest:guest@127.0.0.1:<port>: guest may log in over the loopback interface. */
  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  /** Starts the node on its data directory and resolves once it accepts AMQP connections; the milliseconds that took. */
  async start(timeoutMs = 120_000): Promise<number> {
    if (this.#child) throw new Error(`${this.nodeName} is running already`);
    const started = Date.now();
    rmSync(this.#pidFile, { force: true }); // a stale one names a process that is not ours
    const child = spawn('/bin/sh', ['-c', GUARD, this.#server], { env: this.#env, cwd: this.#dir, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child = child;
    const keep = (chunk: Buffer): void => { this.#output = (this.#output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.stdin.on('error', () => {}); // the guard gone first
    let exitCode: number | null | undefined;
    this.#exited = new Promise((resolve) => child.once('exit', (code) => {
      exitCode = code;
      rmSync(this.#pidFile, { force: true });
      resolve(code);
    }));
    const deadline = started + timeoutMs;
    for (;;) {
      if (exitCode !== undefined) {
        child.stdin.end(); // the guard's watcher
        this.#child = undefined;
        throw new Error(`${this.nodeName} exited (code ${String(exitCode)}) while starting:\n${this.diagnostics()}`);
      }
      if (await this.#accepts()) return Date.now() - started;
      if (Date.now() > deadline) throw new Error(`${this.nodeName} did not accept connections within ${timeoutMs} ms:\n${this.diagnostics()}`);
      await sleep(200);
    }
  }

  /**
   * Stops the node: `graceful` as `rabbitmqctl stop` or a service manager does it (SIGTERM: the
   * listeners close, clients get connection.close 320 CONNECTION_FORCED, queues are written out);
   * `kill` is SIGKILL of the Erlang VM (a crash: clients see their sockets close). Resolves when
   * the node is down, with the milliseconds that took.
   */
  async stop(how: 'graceful' | 'kill' = 'graceful', timeoutMs = 60_000): Promise<number> {
    const child = this.#child;
    if (!child) return 0;
    const started = Date.now();
    if (how === 'kill') this.#killVm();
    child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      this.#exited!.then(() => true),
      new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); }),
    ]).finally(() => clearTimeout(timer));
    if (!exited) {
      this.#killVm();
      child.kill('SIGKILL');
      await this.#exited;
    }
    this.#child = undefined;
    if (!exited) throw new Error(`${this.nodeName} did not stop within ${timeoutMs} ms; killed:\n${this.diagnostics()}`);
    return Date.now() - started;
  }

  /** Ready, unacknowledged and consumers of `queue`, as the node reports them (`rabbitmqctl list_queues`). */
  async queueCounts(queue: string): Promise<QueueCounts> {
    const ctl = join(dirname(this.#server), 'rabbitmqctl');
    const args = ['-n', this.nodeName, '-q', 'list_queues', '--formatter', 'json', 'name', 'messages_ready', 'messages_unacknowledged', 'consumers'];
    const { stdout } = await execFileAsync(ctl, args, { env: this.#env, cwd: this.#dir, encoding: 'utf8', timeout: 60_000 }).catch((e: unknown) => {
      const { stderr = '', stdout: out = '' } = e as { stderr?: string; stdout?: string };
      throw new Error(`rabbitmqctl list_queues failed: ${String(e)} ${stderr}${out}`);
    });
    const rows = JSON.parse(stdout) as Array<{ name: string; messages_ready: number; messages_unacknowledged: number; consumers: number }>;
    const row = rows.find((q) => q.name === queue);
    if (!row) throw new Error(`${this.nodeName} has no queue ${queue}`);
    return { ready: row.messages_ready, unacked: row.messages_unacknowledged, consumers: row.consumers };
  }

  /** The end of the server's output and of its log file: for a failure message. */
  diagnostics(): string {
    let log = '';
    try {
      log = readFileSync(join(this.#dir, 'log', `${this.nodeName}.log`), 'utf8').slice(-OUTPUT_TAIL_CHARS);
    } catch {
      log = '(no log file)';
    }
    return `--- output ---\n${this.#output}\n--- ${this.nodeName}.log ---\n${log}`;
  }

  /** Stops the node if it runs (SIGKILL: nothing of it is kept) and removes its directory. */
  async destroy(): Promise<void> {
    if (this.#child) await this.stop('kill').catch(() => {});
    rmSync(this.#dir, { recursive: true, force: true });
  }

  async #accepts(): Promise<boolean> {
    try {
      const connection = await amqplib.connect(this.url, { timeout: 2_000 });
      await connection.close().catch(() => {});
      return true;
    } catch {
      return false;
    }
  }

  get #pidFile(): string {
    return join(this.#dir, 'rabbitmq.pid');
  }

  /** SIGKILL of the Erlang VM: the pid the node wrote, if it is the child of our guard's server script. */
  #killVm(): void {
    const guard = this.#child?.pid;
    let pid: number;
    try {
      pid = Number(readFileSync(this.#pidFile, 'utf8').trim());
    } catch {
      return; // not written yet, or the node is gone
    }
    if (!Number.isInteger(pid) || pid <= 0 || guard === undefined) return;
    // Where /proc tells (Linux), the VM's parent is the server script, whose parent is the guard.
    const parentOf = (p: number): number | null => {
      try {
        return Number(readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      } catch {
        return null;
      }
    };
    const script = parentOf(pid);
    if (existsSync('/proc/self/stat') && (script === null || parentOf(script) !== guard)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/**
 * Everything the node reads from its environment, pointed into `dir`: no file of the shared
 * broker (/etc/rabbitmq's env file, config, enabled plugins) applies. No plugins are enabled,
 * so there is no management listener. HOME holds the node's Erlang cookie, which rabbitmqctl
 * then finds too.
 */
function nodeEnv(dir: string, nodeName: string, port: number, distPort: number): NodeJS.ProcessEnv {
  for (const sub of ['home', 'log', 'mnesia']) mkdirSync(join(dir, sub), { recursive: true });
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  writeFileSync(join(dir, 'rabbitmq.conf'), '');
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const { PATH, LANG, LC_ALL } = process.env;
  return {
    ...(PATH !== undefined ? { PATH } : {}),
    ...(LANG !== undefined ? { LANG } : {}),
    ...(LC_ALL !== undefined ? { LC_ALL } : {}),
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_BASE: dir,
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'), // #pidFile
    ERL_CRASH_DUMP: join(dir, 'log', 'erl_crash.dump'),
    // An epmd this node starts (when none runs) listens on loopback only; so does the distribution port.
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  };
}

/** A port in PORT_RANGE nothing listens on now (on 127.0.0.1 or on every address). */
async function freeFixedPort(): Promise<number> {
  const span = PORT_RANGE.max - PORT_RANGE.min;
  const first = PORT_RANGE.min + Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    const port = PORT_RANGE.min + ((first - PORT_RANGE.min + i) % span);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.min}–${PORT_RANGE.max}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

const execFileAsync = promisify(execFile);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
