/**
 * What the admin commands (`smppd status`, `smppd upstream`, `smppd messages`) share: where the
 * daemon's admin API is and the token to call it with (--url and --token or SMPPD_ADMIN_TOKEN,
 * else the config file: http.listen, http.tls and the first admin token), one request to it, and
 * the exit codes its outcomes map to. The token never reaches the output.
 */
import { X509Certificate } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../core/clock.js';
import { loadConfigFile, type Env } from '../config/load.js';
import type { SmppdConfig } from '../config/schema.js';
import { DEFAULT_CONFIG } from './route.js';
import { urlOfListen } from './send.js';

/** The admin commands' exit codes, as their usage texts and docs/operations.md document them. */
export const ADMIN_EXIT = {
  ok: 0,
  /** The daemon answered with an error: an unknown upstream or message, a bad parameter. */
  refused: 1,
  usage: 2,
  /** The daemon cannot be reached: nothing listens, no answer in time, TLS refused. */
  unreachable: 3,
  /** The token is missing, unknown (401) or not an admin's (403). */
  unauthorized: 4,
  /** sysexits.h EX_CONFIG, as `smppd start`: the configuration does not load or has no admin token. */
  config: 78,
} as const;
export type AdminExit = (typeof ADMIN_EXIT)[keyof typeof ADMIN_EXIT];

/** A command's failure and the exit code it ends with. */
export class AdminCommandError extends Error {
  constructor(message: string, readonly exit: AdminExit) {
    super(message);
  }
}

/** The options every admin command takes, for parseArgs. */
export const TARGET_OPTIONS = {
  config: { type: 'string', short: 'c' },
  url: { type: 'string' },
  token: { type: 'string' },
} as const;

/** The usage lines of TARGET_OPTIONS. */
export const TARGET_USAGE = `  -c, --config FILE    the daemon's configuration: its http.listen (and http.tls: HTTPS, trusting
                       only the certificate it names) and its first admin token; default
                       ${DEFAULT_CONFIG}, read only for what --url and --token do not give
  --url URL            the daemon's HTTP API, e.g. http://127.0.0.1:8080
  --token TOKEN        an admin token (admin.tokens[].token); better in SMPPD_ADMIN_TOKEN, which
                       other users cannot read from the process list`;

/** Where the daemon is and how to call it. */
export interface AdminTarget {
  /** Without a trailing slash. */
  url: string;
  token: string;
  /** With a URL from the config's http.tls: the only certificate the daemon may present (DER). */
  pinnedCert?: Buffer;
  /** http.tls.requestClientCert is set: a refused handshake is likely that. */
  clientCertRequired?: boolean;
}

/** Milliseconds of silence on the connection before the command gives up on the daemon. */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * The target from the options: --url and --token (or SMPPD_ADMIN_TOKEN) as given, the rest from
 * the config file, which is read only when one of the two is missing.
 */
export async function resolveTarget(values: { config?: string | undefined; url?: string | undefined; token?: string | undefined }, env: Env): Promise<AdminTarget> {
  const given = values.token ?? env['SMPPD_ADMIN_TOKEN'];
  const token = given?.trim();
  if (given !== undefined && token === '') throw new AdminCommandError(values.token !== undefined ? '--token is empty' : 'SMPPD_ADMIN_TOKEN is empty', ADMIN_EXIT.usage);
  const url = values.url === undefined ? undefined : checkUrl(values.url);
  if (url !== undefined && token !== undefined) return { url, token };

  const file = values.config ?? DEFAULT_CONFIG;
  let config: SmppdConfig;
  try {
    config = await loadConfigFile(file, env);
  } catch (e) {
    // The messages of a config that does not load never carry a secret's value.
    const hint = values.config === undefined ? ' (give --config FILE, or --url and --token)' : '';
    throw new AdminCommandError(`${(e as Error).message}${hint}`, ADMIN_EXIT.config);
  }
  const configToken = token ?? config.admin?.tokens[0]?.token;
  if (configToken === undefined) {
    throw new AdminCommandError(`${file} has no admin.tokens: add an admin token to it, or give --token TOKEN (or SMPPD_ADMIN_TOKEN)`, ADMIN_EXIT.config);
  }
  if (url !== undefined) return { url, token: configToken };
  const tls = config.http.tls;
  let listenUrl: string;
  try {
    listenUrl = urlOfListen(config.http.host, config.http.port, tls !== undefined);
  } catch (e) {
    throw new AdminCommandError(`${file}: ${(e as Error).message}`, ADMIN_EXIT.usage);
  }
  return {
    url: listenUrl,
    token: configToken,
    ...(tls ? { pinnedCert: new X509Certificate(tls.cert).raw, clientCertRequired: tls.requestClientCert } : {}),
  };
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AdminCommandError(`--url must be a URL such as http://127.0.0.1:8080, got '${text}'`, ADMIN_EXIT.usage);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AdminCommandError(`--url must be http:// or https://, got '${text}'`, ADMIN_EXIT.usage);
  return url.href.replace(/\/+$/, '');
}

/**
 * One request to the admin API with the bearer token; resolves to the parsed JSON of a 2xx answer.
 * Anything else is an AdminCommandError: 401/403 exit 4, another answer exit 1, no answer exit 3.
 */
export async function adminRequest(target: AdminTarget, method: 'GET' | 'POST', path: string, body?: object): Promise<unknown> {
  const { status, text } = await exchange(target, method, path, body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (status >= 200 && status < 300) {
    if (parsed === undefined) throw new AdminCommandError(`${method} ${path} answered ${status} without JSON: is ${target.url} smppd's HTTP API?`, ADMIN_EXIT.refused);
    return parsed;
  }
  const b = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  const message = typeof b['message'] === 'string' ? b['message'] : text.slice(0, 200);
  const code = typeof b['errorCode'] === 'string' ? b['errorCode'] : typeof b['error'] === 'string' ? b['error'] : '';
  const summary = `${method} ${path}: HTTP ${status}${code === '' ? '' : ` ${code}`}: ${message}`;
  if (status === 401) throw new AdminCommandError(`${summary} (is the token one of admin.tokens?)`, ADMIN_EXIT.unauthorized);
  if (status === 403) throw new AdminCommandError(`${summary} (a client's token: the admin API takes an admin token)`, ADMIN_EXIT.unauthorized);
  if (status === 404 && code === 'NOT_FOUND') {
    throw new AdminCommandError(`${summary} (a daemon without an admin section in its config serves no /admin routes)`, ADMIN_EXIT.refused);
  }
  throw new AdminCommandError(summary, ADMIN_EXIT.refused);
}

/** The raw exchange: status and body text, or exit 3 when there is no answer. */
function exchange(target: AdminTarget, method: string, path: string, body: object | undefined): Promise<{ status: number; text: string }> {
  const url = `${target.url}${path}`;
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const pinned = target.pinnedCert;
  return new Promise((resolve, reject) => {
    const unreachable = (reason: string): void => reject(new AdminCommandError(`cannot reach ${target.url}: ${reason}`, ADMIN_EXIT.unreachable));
    const onResponse = (res: IncomingMessage): void => {
      const peer = pinned ? (res.socket as TLSSocket).getPeerCertificate() : undefined;
      if (pinned && !(peer?.raw && pinned.equals(peer.raw))) {
        res.destroy();
        unreachable('it presented a certificate other than http.tls.cert');
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', (e) => unreachable(e.message));
    };
    const headers: Record<string, string> = { authorization: `Bearer ${target.token}`, accept: 'application/json' };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    // With a pinned certificate the chain and name are not checked: the one certificate is.
    const options = { method, headers, agent: false, timeout: REQUEST_TIMEOUT_MS, ...(pinned ? { rejectUnauthorized: false } : {}) } as const;
    const req = url.startsWith('https:') ? httpsRequest(url, options, onResponse) : httpRequest(url, options, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      const hint = target.clientCertRequired ? ' (http.tls.requestClientCert: the daemon wants a client certificate)' : '';
      unreachable(`${e.code ?? e.message}${hint}`);
    });
    req.end(payload);
  });
}

/** Where a command writes, and what it reads; the defaults are the process's. */
export interface AdminIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** SMPPD_ADMIN_TOKEN and the `SMPPD_…` config overrides come from here. Default process.env. */
  env?: Env;
  /** For times given as "2h" (ago). Default SystemClock. */
  clock?: Clock;
}

export const processIo: AdminIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** `io` with `secret` replaced by *** in every line (whatever a server or an error says). */
export function hiding(io: AdminIo, secret: string): AdminIo {
  // Admin tokens have at least 16 characters; a very short one would mask ordinary words.
  const hide = (line: string): string => (secret.length >= 8 ? line.split(secret).join('***') : line);
  return { ...io, out: (l) => io.out(hide(l)), err: (l) => io.err(hide(l)) };
}

/** Whether parseArgs refused the arguments (a usage error). */
export function isParseArgsError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/**
 * Resolves the target and runs `action` with output that hides the token; an AdminCommandError
 * from either is printed as `smppd <command>: …` and ends with its exit code.
 */
export async function withTarget(
  command: string, values: { config?: string | undefined; url?: string | undefined; token?: string | undefined }, io: AdminIo,
  action: (target: AdminTarget, io: AdminIo) => Promise<AdminExit>,
): Promise<AdminExit> {
  let out = io;
  try {
    const target = await resolveTarget(values, io.env ?? process.env);
    out = hiding(io, target.token);
    return await action(target, out);
  } catch (e) {
    if (!(e instanceof AdminCommandError)) throw e;
    out.err(`smppd ${command}: ${e.message}`);
    return e.exit;
  }
}
