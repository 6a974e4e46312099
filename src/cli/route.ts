/**
 * `smppd route NUMBER`: the route a send of NUMBER by a client would take, and the upstream it
 * would go to now, decided by the daemon's own code (RouteTable, Router). Which upstreams are
 * available comes from the running daemon's GET /readyz; with --offline, or when the daemon does
 * not answer, from the config alone, every upstream taken as available.
 */
import { X509Certificate } from 'node:crypto';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { parseArgs } from 'node:util';
import { checkNumber, NUMBER_PROBLEMS } from '../api/numbers.js';
import { loadConfigWithOverrides, type Env } from '../config/load.js';
import type { HttpTlsConfig, SmppdConfig } from '../config/schema.js';
import { RouteTable } from '../dispatch/route-table.js';
import { Router, type Availability, type RouteChoice } from '../dispatch/router.js';
import { urlOfListen } from './send.js';

/** The exit codes, as the usage text documents them. */
export const ROUTE_EXIT = {
  /** A route takes the number. */
  routed: 0,
  /** No route takes it: a send would be refused 400 NO_ROUTE. */
  noRoute: 1,
  usage: 2,
  /** sysexits.h EX_CONFIG, as `smppd start`. */
  config: 78,
} as const;

/** Where the systemd unit's configuration lives (systemd/smppd.service): the default of --config. */
export const DEFAULT_CONFIG = '/etc/smppd/smppd.yaml';

const USAGE = `Usage: smppd route NUMBER [--client NAME] [--config FILE] [--offline] [--json]

Prints the route a send of NUMBER by client NAME would take and the upstream it would go to now.
Reads FILE (with the SMPPD_… overrides) as 'smppd start' does, then asks the running daemon which
upstreams are available (GET /readyz on http.listen; HTTPS with http.tls, trusting only the
certificate FILE names). With --offline, or when the daemon does not answer (said on stderr), it
decides from the config alone, taking every upstream as available.

Exit code: 0 a route takes NUMBER; 1 no route takes it (a send would get 400 NO_ROUTE);
2 usage error (NUMBER not a number sendSms takes, an unknown option or client); 78 the
configuration does not load.

Options:
  NUMBER               the destination: country code and number, digits only (447700900123)
  --client NAME        the sending client (clients[].name): its own routes apply too;
                       default none, so only the routes for every client
  -c, --config FILE    the daemon's configuration file; default ${DEFAULT_CONFIG}
  --offline            do not ask the daemon: every upstream taken as available
  --json               print one JSON object instead (also when no route takes NUMBER)
  -h, --help           this text`;

/** Milliseconds the daemon has to answer GET /readyz. */
const READYZ_TIMEOUT_MS = 3_000;

/** Whether each upstream the daemon knows is available now; throws when the daemon cannot be asked. */
export type AskDaemon = (config: SmppdConfig) => Promise<ReadonlyMap<string, boolean>>;

/** Where the command writes and what it reads; the defaults are the process's. */
export interface RouteIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** The `SMPPD_…` overrides come from here. Default process.env. */
  env?: Env;
  /** Default: GET /readyz on the config's http.listen. */
  askDaemon?: AskDaemon;
}

const processIo: RouteIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

class UsageError extends Error {}

interface RouteOptions {
  number: string;
  client: string | undefined;
  config: string;
  offline: boolean;
  json: boolean;
}

/** `smppd route`: resolves to one of ROUTE_EXIT. */
export async function runRoute(argv: string[], io: RouteIo = processIo): Promise<number> {
  let o: RouteOptions | 'help';
  try {
    o = parseOptions(argv);
  } catch (e) {
    io.err(`smppd route: ${(e as Error).message}\n\n${USAGE}`);
    return ROUTE_EXIT.usage;
  }
  if (o === 'help') {
    io.out(USAGE);
    return ROUTE_EXIT.routed;
  }
  let config: SmppdConfig;
  try {
    config = (await loadConfigWithOverrides(o.config, io.env ?? process.env)).config;
  } catch (e) {
    // The line 'smppd start' prints: the messages never carry a secret's value.
    io.err(`smppd: ${(e as Error).message}`);
    return ROUTE_EXIT.config;
  }
  if (o.client !== undefined && !config.clients.some((c) => c.name === o.client)) {
    io.err(`smppd route: ${o.config} has no client '${o.client}' (clients: ${config.clients.map((c) => c.name).join(', ')})`);
    return ROUTE_EXIT.usage;
  }

  let known: ReadonlyMap<string, boolean> | undefined;
  let daemonError: string | undefined;
  if (!o.offline) {
    try {
      known = await (io.askDaemon ?? readyzAvailability)(config);
    } catch (e) {
      daemonError = (e as Error).message;
      io.err(`smppd route: cannot ask the daemon (${daemonError}); deciding from the config alone, every upstream taken as available`);
    }
  }
  const availability: Availability = { available: (u) => (known ? known.get(u) === true : true) };
  const choice = new Router(new RouteTable(config.routes), availability).explain(o.number, o.client ?? '');
  const source = known ? 'daemon' : 'config';
  if (known) {
    const unknown = choice?.route.upstreams.filter((u) => !known.has(u)) ?? [];
    if (unknown.length > 0) io.err(`smppd route: the daemon has no upstream ${unknown.join(', ')}: is it running with another configuration? Taken as unavailable`);
  }
  if (!choice) {
    if (o.json) io.out(JSON.stringify({ number: o.number, client: o.client ?? null, route: null, availability: source }));
    io.err(`smppd route: no route takes ${o.number}${o.client === undefined ? ' for a client without routes of its own' : ` for client ${o.client}`}: a send would be refused (400 NO_ROUTE)`);
    return ROUTE_EXIT.noRoute;
  }
  const lines = o.json
    ? [JSON.stringify(jsonOf(o, choice, source, daemonError))]
    : humanLines(o.number, choice, source, config.routesConfigured);
  for (const line of lines) io.out(line);
  return ROUTE_EXIT.routed;
}

function parseOptions(argv: string[]): RouteOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      client: { type: 'string' },
      config: { type: 'string', short: 'c' },
      offline: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'NUMBER is required' : `one NUMBER only, got ${positionals.length}`);
  const number = positionals[0]!;
  const problem = checkNumber(number);
  if (problem !== null) throw new UsageError(`NUMBER ${NUMBER_PROBLEMS[problem]}`);
  if (values.client === '') throw new UsageError('--client must name a client');
  return { number, client: values.client, config: values.config ?? DEFAULT_CONFIG, offline: values.offline === true, json: values.json === true };
}

/** The prefix of `route` that took `number`: its longest that starts it. */
function matchedPrefix(route: RouteChoice['route'], number: string): string {
  return route.prefixes.filter((p) => number.startsWith(p)).reduce((a, b) => (b.length > a.length ? b : a), '');
}

/** The upstreams a new send may go to now: the chosen one, or every available one of a weighted route. */
function sendsTo(choice: RouteChoice): Array<{ name: string; weight: number }> {
  const spread = choice.route.strategy === 'weighted' ? choice.upstreams.filter((u) => u.available) : [];
  return spread.length > 0 ? spread : choice.upstreams.filter((u) => u.name === choice.upstream);
}

function humanLines(number: string, choice: RouteChoice, source: 'daemon' | 'config', routesConfigured: boolean): string[] {
  const { route } = choice;
  const prefix = matchedPrefix(route, number);
  const weighted = route.strategy === 'weighted';
  const head = `route ${route.name} (prefix ${prefix === '' ? '"" (any number)' : prefix}; clients: ${route.clients?.join(', ') ?? 'any'}; strategy ${route.strategy})`;
  const state = (available: boolean): string => (source === 'config' ? 'assumed available' : available ? 'available' : 'unavailable');
  const upstreams = choice.upstreams.map((u) => `${u.name} (${state(u.available)}${weighted ? `, weight ${u.weight}` : ''})`).join(', ');
  const none = !choice.upstreams.some((u) => u.available);
  const to = none
    ? `${choice.upstream} (none available: sends wait in its queue until an upstream of the route returns)`
    : sendsTo(choice).map((u) => (weighted ? `${u.name} (weight ${u.weight})` : u.name)).join(', ');
  const lines = [routesConfigured ? head : `${head}; the config has no routes: every upstream, in file order`, `upstreams: ${upstreams}`, `sends go to: ${to}`];
  return lines;
}

function jsonOf(o: RouteOptions, choice: RouteChoice, source: 'daemon' | 'config', daemonError: string | undefined): object {
  const { route } = choice;
  return {
    number: o.number,
    client: o.client ?? null,
    route: { name: route.name, prefix: matchedPrefix(route, o.number), prefixes: route.prefixes, clients: route.clients ?? null, strategy: route.strategy },
    upstreams: choice.upstreams,
    upstream: choice.upstream,
    sendsTo: choice.upstreams.some((u) => u.available) ? sendsTo(choice).map((u) => u.name) : [],
    availability: source,
    ...(daemonError !== undefined ? { daemonError } : {}),
  };
}

// --- asking the daemon ---

/** GET /readyz on the config's http.listen: each upstream's `available`, whether ready or not (503). */
export async function readyzAvailability(config: SmppdConfig): Promise<ReadonlyMap<string, boolean>> {
  if (config.http.port === 0) throw new Error('http.listen has port 0 (any free port): the daemon\'s port is not known');
  const tls = config.http.tls;
  const url = `${urlOfListen(config.http.host, config.http.port, tls !== undefined)}/readyz`;
  const { status, text } = await getText(url, tls);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const upstreams = (body as { upstreams?: unknown } | undefined)?.upstreams;
  const valid = Array.isArray(upstreams) && upstreams.every((u: { name?: unknown; available?: unknown } | null) => typeof u?.name === 'string' && typeof u.available === 'boolean');
  if (!valid) throw new Error(`GET ${url} answered ${status} without the upstreams' availability: is it this smppd's HTTP API?`);
  return new Map((upstreams as Array<{ name: string; available: boolean }>).map((u) => [u.name, u.available]));
}

/**
 * One GET, any status. Over HTTPS the daemon must present the certificate of http.tls.cert: the
 * daemon's own, read from its config, so neither a CA nor the listen address's name need match.
 */
function getText(url: string, tls: HttpTlsConfig | undefined): Promise<{ status: number; text: string }> {
  const leaf = tls ? new X509Certificate(tls.cert).raw : undefined;
  return new Promise((resolve, reject) => {
    const onResponse = (res: IncomingMessage): void => {
      const peer = leaf ? (res.socket as TLSSocket).getPeerCertificate() : undefined;
      if (leaf && !(peer?.raw && leaf.equals(peer.raw))) {
        res.destroy();
        reject(new Error(`${url} presented a certificate other than http.tls.cert`));
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    };
    const options = { agent: false, timeout: READYZ_TIMEOUT_MS, ...(tls ? { rejectUnauthorized: false } : {}) } as const;
    const req = tls ? httpsGet(url, options, onResponse) : httpGet(url, options, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${READYZ_TIMEOUT_MS / 1000} s`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      const hint = tls?.requestClientCert ? ' (http.tls.requestClientCert: the daemon wants a client certificate; use --offline)' : '';
      reject(new Error(e.code ? `${url}: ${e.code}${hint}` : `${e.message}${hint}`));
    });
  });
}
