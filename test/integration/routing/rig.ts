/**
 * What the routing tests share: SMSC simulators that can be stopped and started again on the
 * same port (an SMSC going away and coming back), and a daemon (`startDaemon`, in process) with
 * several upstreams and `routes`, over HTTP, with its metrics.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog, type Log } from '../../../src/core/log.js';
import { Metrics } from '../../../src/observability/metrics.js';
import type { BehaviourPatch } from '../../../src/simulator/behaviour.js';
import type { RecordedSubmit } from '../../../src/simulator/options.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import type { Pool } from '../../../src/smpp/pool.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { until } from '../../support/engine.js';

export const TOKENS = { app: 'routing-app-token-0123456789', shop: 'routing-shop-token-0123456789' } as const;
export type ClientName = keyof typeof TOKENS;

const SYSTEM_ID = 'routing';
const PASSWORD = 'routepw';
const clock = new SystemClock();

/**
 * One SMSC on a fixed port: `stop` is the SMSC going away (its links dropped, its pending
 * receipts lost), `start` brings it back on the same port. What it received is kept across
 * restarts. Each receipt leaves in the same write as its response (unless `behaviour` says
 * otherwise), so a stop never strands a message SENT: the daemon has both or neither.
 */
export class Smsc {
  #sim: SmscSimulator | undefined;
  #port = 0;
  readonly #received: RecordedSubmit[] = [];
  readonly #behaviour: BehaviourPatch;

  constructor(behaviour: BehaviourPatch = {}) {
    this.#behaviour = { ...behaviour, receipts: { delayMs: 0, ...behaviour.receipts } };
  }

  get port(): number {
    return this.#port;
  }

  get running(): boolean {
    return this.#sim !== undefined;
  }

  async start(): Promise<this> {
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: this.#port, accounts: [{ systemId: SYSTEM_ID, password: PASSWORD }], record: true, behaviour: this.#behaviour,
    }, clock, silentLog);
    this.#port = (await sim.start()).port;
    this.#sim = sim;
    return this;
  }

  async stop(): Promise<void> {
    const sim = this.#sim;
    if (!sim) return;
    this.#sim = undefined;
    await sim.stop();
    this.#received.push(...sim.recordedSubmits());
  }

  /** Every submit_sm it received, over all its runs, in order. */
  received(): RecordedSubmit[] {
    return [...this.#received, ...(this.#sim?.recordedSubmits() ?? [])];
  }

  /** The destination numbers of what it received. */
  destinations(): string[] {
    return this.received().map((s) => s.destinationAddr);
  }
}

/** Starts an SMSC; stopped after the test. */
export async function smsc(cleanups: Cleanups, behaviour: BehaviourPatch = {}): Promise<Smsc> {
  const s = await new Smsc(behaviour).start();
  cleanups.push(() => s.stop());
  return s;
}

export interface UpstreamLine {
  name: string;
  smsc: Smsc;
  /** Default 1. */
  failoverAfterSeconds?: number;
  /** More keys of the upstream's YAML flow map, e.g. `defaultAlphabet: latin1`. */
  extra?: string;
}

export interface RoutingDaemonOptions {
  upstreams: UpstreamLine[];
  /** The `routes:` entries, one YAML flow map each; none: the file has no `routes`. */
  routes?: string[];
  /** The `store:` YAML flow map. Default: SQLite in the daemon's folder. */
  store?: string;
  /** More top-level lines of the YAML, e.g. `admin: { tokens: [...] }`. */
  extra?: string[];
  /** A webhook URL per client (quick retries): its messages write events, delivered there. */
  webhooks?: Partial<Record<ClientName, string>>;
  log?: Log;
}

export interface RoutingDaemon {
  d: RunningDaemon;
  metrics: Metrics;
  dir: string;
  /** POST `path` with a JSON body as `client`. */
  post(path: string, body: object, client?: ClientName): Promise<Response>;
  /** POST /sms/sendSms as `client`; throws unless 200; the message id. */
  send(destinationNumber: string, message?: string, client?: ClientName, messageType?: 'TEXT' | 'UNICODE'): Promise<string>;
  /** The status of a message `send` sent, by GET /sms/status as its sender. */
  status(id: string): Promise<string>;
  readyz(): Promise<{ status: number; body: { status: string; reasons?: string[]; upstreams: Array<{ name: string; available: boolean; bound: number; binds: number }> } }>;
  /** Resolves once `upstream` is available (a bind bound), or not, as asked. */
  untilAvailable(upstream: string, available?: boolean): Promise<void>;
  /** The sum of a counter over its series that carry these labels (0 when never counted). */
  counter(name: string, labels?: Record<string, string>): Promise<number>;
}

const webhookOf = (url: string | undefined): string => (url === undefined ? ''
  : `, webhook: { url: "${url}", secret: routing-webhook-secret-0123456789, allowHttp: true, retry: { initialSeconds: 0.05, maxSeconds: 0.2 } }`);

/**
 * A daemon with `upstreams` (one bind each, quick reconnects, failover after 1 s unless told) and `routes`;
 * clients `app` and `shop`. Stopped after the test.
 */
export async function routingDaemon(cleanups: Cleanups, o: RoutingDaemonOptions): Promise<RoutingDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-routing-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const upstreamLines = o.upstreams.map((u) => `  - { name: ${u.name}, host: 127.0.0.1, port: ${u.smsc.port}, systemId: ${SYSTEM_ID}, password: ${PASSWORD}, `
    + `reconnect: { initialSeconds: 0.05, maxSeconds: 0.2 }, failoverAfterSeconds: ${u.failoverAfterSeconds ?? 1}${u.extra ? `, ${u.extra}` : ''} }`);
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [${(['app', 'shop'] as const).map((c) => `{ name: ${c}, token: ${TOKENS[c]}${webhookOf(o.webhooks?.[c])} }`).join(', ')}]`,
    `store: ${o.store ?? '{ path: smppd.db }'}`,
    'upstreams:',
    ...upstreamLines,
    ...(o.routes ? ['routes:', ...o.routes.map((r) => `  - ${r}`)] : []),
    ...(o.extra ?? []),
    '',
  ].join('\n'), dir);
  let pool: Pool | undefined;
  const running: { d?: RunningDaemon } = {};
  const metrics = new Metrics(() => pool?.stats() ?? [], {
    processMetrics: false,
    readUpstreams: () => running.d?.upstreams() ?? [],
  });
  const d = await startDaemon(config, { clock, log: o.log ?? silentLog, metrics, onPool: (p) => { pool = p; } });
  running.d = d;
  cleanups.push(() => d.stop());
  const base = `http://127.0.0.1:${d.http.port}`;
  // Who sent each message: its status is the sender's to read.
  const senders = new Map<string, ClientName>();
  const post = (path: string, body: object, client: ClientName = 'app') => fetch(`${base}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${TOKENS[client]}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return {
    d, metrics, dir, post,
    async send(destinationNumber, message = 'hello', client = 'app', messageType = 'TEXT') {
      const res = await post('/sms/sendSms', { senderId: 'Routing', destinationNumber, message, messageType }, client);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`sendSms ${destinationNumber}: ${res.status} ${text}`);
      senders.set(text, client);
      return text;
    },
    async status(id) {
      const res = await fetch(`${base}/sms/status/${id}`, { headers: { authorization: `Bearer ${TOKENS[senders.get(id) ?? 'app']}` } });
      return ((await res.json()) as { status: string }).status;
    },
    async readyz() {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, body: await res.json() as Awaited<ReturnType<RoutingDaemon['readyz']>>['body'] };
    },
    async untilAvailable(upstream, available = true) {
      await until(() => d.upstreams().some((u) => u.name === upstream && u.available === available), 10_000, `${upstream} ${available ? 'available' : 'unavailable'}`);
    },
    async counter(name, labels = {}) {
      const metric = metrics.registry.getSingleMetric(name);
      if (!metric) throw new Error(`no metric ${name}`);
      const values = (await metric.get()).values;
      const wanted = Object.entries(labels);
      return values.filter((v) => wanted.every(([k, val]) => v.labels[k] === val)).reduce((sum, v) => sum + v.value, 0);
    },
  };
}

/** Resolves once every message of `ids` has one of the final statuses; fails after `ms`. */
export async function untilAllFinal(r: RoutingDaemon, ids: readonly string[], ms = 20_000): Promise<string[]> {
  let statuses: string[] = [];
  await until(async () => {
    statuses = await Promise.all(ids.map((id) => r.status(id)));
    return statuses.every((s) => ['DELIVERED', 'READ', 'FAILED', 'REJECTED'].includes(s));
  }, ms, 'every message final');
  return statuses;
}
