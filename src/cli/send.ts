/**
 * `smppd send`: one test message through a running daemon, over its HTTP API only.
 * POST /sms/sendSms, print the id, then poll GET /sms/status/{id} and print each change until a
 * final status or the timeout. Exit 0 on DELIVERED or READ; 1 on FAILED, REJECTED, a timeout or
 * an HTTP error; 2 on a usage error. The token is never printed.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { SystemClock, type Clock } from '../core/clock.js';
import { loadConfigFile } from '../config/load.js';
import { isDeliveryStatus, isFinal } from '../sms/status.js';

const USAGE = `Usage: smppd send --to NUMBER --from SENDER --text TEXT [options]

Sends one message through a running daemon (its HTTP API), prints the message id, then polls
its status and prints one line per change until DELIVERED, READ, FAILED or REJECTED.
Exit code: 0 DELIVERED or READ; 1 FAILED, REJECTED, timeout or an HTTP error; 2 usage error.

Options:
  --to NUMBER          destination, country code and number, digits only (447700900123)
  --from SENDER        sender ID (senderId); must be allowed for the client's token
  --text TEXT          the message
  --unicode            send as UNICODE (UCS-2); default TEXT (GSM-7, other characters refused)
  --url URL            the daemon's HTTP API (default: http.listen of --config, else
                       http://127.0.0.1:8080)
  --token-file FILE    file holding the bearer token; default: $SMPPD_TOKEN, else the token of
                       the only client in --config
  --config FILE        the daemon's config file: its http.listen and, with exactly one client,
                       that client's token
  --timeout SECONDS    give up waiting for a final status after this long (default 60)
  --json               print JSON lines instead (events accepted, status, timeout, error)
  -h, --help           this text`;

/** Seconds, when --timeout is not given. */
const DEFAULT_TIMEOUT_S = 60;
/** Milliseconds between two status polls. */
const POLL_MS = 250;
const DEFAULT_URL = 'http://127.0.0.1:8080';
/**
 * Milliseconds a request may take at least, even when the timeout is closer: the last poll
 * falls on the deadline, and it must still be answered to report the last status.
 */
const REQUEST_GRACE_MS = 2_000;

/** Where the command writes, and what it reads; the defaults are the process's. */
export interface SendIo {
  out: (line: string) => void;
  err: (line: string) => void;
  /** SMPPD_TOKEN is read from here. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Default SystemClock. */
  clock?: Clock;
}

const processIo: SendIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

interface SendOptions {
  to: string;
  from: string;
  text: string;
  unicode: boolean;
  url: string;
  token: string;
  timeoutMs: number;
  json: boolean;
}

/** GET /sms/status/{id}, the fields this command reads (src/ingress/http/views.ts MessageStatus). */
interface StatusView {
  status: string;
  reason: string | null;
  parts: Array<{ part: number; status: string; smscMessageId: string | null }>;
}

class UsageError extends Error {}
/** A refusal or a failure to reach the daemon: exit 1. */
class SendFailure extends Error {
  constructor(message: string, readonly fields: Record<string, unknown>) {
    super(message);
  }
}

/** `smppd send`: resolves to the exit code. */
export async function runSend(argv: string[], io: SendIo = processIo): Promise<number> {
  const clock = io.clock ?? new SystemClock();
  let options: SendOptions | 'help';
  try {
    options = await resolveOptions(argv, io.env ?? process.env);
  } catch (e) {
    if (e instanceof UsageError || isParseArgsError(e)) {
      io.err(`smppd send: ${(e as Error).message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`smppd send: ${(e as Error).message}`);
    return 1;
  }
  if (options === 'help') {
    io.out(USAGE);
    return 0;
  }
  // Belt and braces: whatever a server or an error message says, the token is not printed.
  // (Config tokens have at least 16 characters; a very short one would mask ordinary words.)
  const token = options.token;
  const hide = (line: string): string => (token.length >= 8 ? line.split(token).join('***') : line);
  const print = new Printer(options.json, (l) => io.out(hide(l)), (l) => io.err(hide(l)));
  try {
    return await sendAndFollow(options, clock, print);
  } catch (e) {
    if (e instanceof SendFailure) {
      print.failure(e);
      return 1;
    }
    throw e;
  }
}

async function sendAndFollow(o: SendOptions, clock: Clock, print: Printer): Promise<number> {
  const start = clock.now();
  const deadline = start + o.timeoutMs;
  const body = { senderId: o.from, destinationNumber: o.to, message: o.text, messageType: o.unicode ? 'UNICODE' : 'TEXT' };
  const sent = await call(o, clock, deadline, 'POST', '/sms/sendSms', body);
  const id = (await sent.text()).trim();
  print.accepted(id);

  let last = '';
  let current: string | null = null;
  for (;;) {
    const res = await call(o, clock, deadline, 'GET', `/sms/status/${encodeURIComponent(id)}`);
    const view = await readStatus(res, o.url);
    const key = JSON.stringify([view.status, view.reason, view.parts]);
    if (key !== last) {
      last = key;
      current = view.status;
      print.status(id, view, clock.now() - start);
    }
    // An unknown status (the API may add some) is not final: keep polling.
    if (isDeliveryStatus(view.status) && isFinal(view.status)) {
      return view.status === 'DELIVERED' || view.status === 'READ' ? 0 : 1;
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      print.timeout(id, current, o.timeoutMs);
      return 1;
    }
    await sleep(clock, Math.min(POLL_MS, left));
  }
}

/** One request; any answer but 2xx, or no answer before the deadline, is a SendFailure. */
async function call(o: SendOptions, clock: Clock, deadline: number, method: string, path: string, body?: object): Promise<Response> {
  const abort = new AbortController();
  const limitMs = Math.max(deadline - clock.now(), REQUEST_GRACE_MS);
  const timer = clock.setTimer(limitMs, () => abort.abort());
  let res: Response;
  try {
    res = await fetch(`${o.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: abort.signal,
    });
  } catch (e) {
    timer.cancel();
    if (abort.signal.aborted) {
      throw new SendFailure(`${method} ${path}: no answer within ${Math.round(limitMs) / 1000} s`, { method, path });
    }
    throw new SendFailure(`cannot reach ${o.url}: ${networkReason(e)}`, { url: o.url });
  }
  timer.cancel();
  if (res.ok) return res;
  throw await httpFailure(method, path, res);
}

/** The five-field error body's message and errorCode, the 401's message, or the start of whatever else came. */
async function httpFailure(method: string, path: string, res: Response): Promise<SendFailure> {
  const text = await res.text().catch(() => '');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const b = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  const message = typeof b['message'] === 'string' ? b['message'] : text.slice(0, 200);
  const errorCode = typeof b['errorCode'] === 'string' ? b['errorCode'] : null;
  const hint = errorCode === 'TEXT_NOT_GSM7' ? ' (add --unicode to send it as UCS-2)' : '';
  const label = errorCode ?? (typeof b['error'] === 'string' ? b['error'] : res.statusText);
  return new SendFailure(`${method} ${path}: HTTP ${res.status} ${label}: ${message}${hint}`, {
    method, path, httpStatus: res.status, errorCode, message,
  });
}

/** The status body, or a SendFailure when what answered is not smppd's status route. */
async function readStatus(res: Response, url: string): Promise<StatusView> {
  const view = (await res.json().catch(() => null)) as Partial<StatusView> | null;
  if (typeof view?.status !== 'string' || !Array.isArray(view.parts)) {
    throw new SendFailure(`the answer of GET /sms/status is not a message status: is ${url} the smppd HTTP API?`, { url });
  }
  return { status: view.status, reason: view.reason ?? null, parts: view.parts };
}

function networkReason(e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return (e as Error).message;
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

// --- options ---

async function resolveOptions(argv: string[], env: NodeJS.ProcessEnv): Promise<SendOptions | 'help'> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      to: { type: 'string' },
      from: { type: 'string' },
      text: { type: 'string' },
      unicode: { type: 'boolean' },
      url: { type: 'string' },
      'token-file': { type: 'string' },
      timeout: { type: 'string' },
      config: { type: 'string', short: 'c' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const missing = (['to', 'from', 'text'] as const).filter((k) => values[k] === undefined || values[k] === '');
  if (missing.length > 0) throw new UsageError(`${missing.map((k) => `--${k}`).join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`);
  const timeoutS = values.timeout === undefined ? DEFAULT_TIMEOUT_S : Number(values.timeout);
  if (values.timeout?.trim() === '' || !Number.isFinite(timeoutS) || timeoutS <= 0) {
    throw new UsageError(`--timeout must be a number of seconds > 0, got '${values.timeout}'`);
  }

  // Read only when needed: a config error stops the command (exit 1) with the key that is wrong.
  const config = values.config === undefined ? undefined : await loadConfigFile(values.config);
  const url = checkUrl(values.url ?? (config ? urlOfListen(config.http.host, config.http.port) : DEFAULT_URL));

  let token: string | undefined;
  if (values['token-file'] !== undefined) {
    token = (await readFile(values['token-file'], 'utf8').catch((e: unknown) => {
      throw new Error(`cannot read --token-file ${values['token-file']}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    })).trim();
    if (token === '') throw new UsageError(`--token-file ${values['token-file']} is empty`);
  } else if (env['SMPPD_TOKEN']) {
    token = env['SMPPD_TOKEN'].trim();
  } else if (config) {
    if (config.clients.length !== 1) {
      throw new UsageError(`${values.config} has ${config.clients.length} clients; say whose token to use with --token-file FILE or SMPPD_TOKEN`);
    }
    token = config.clients[0]!.token;
  }
  if (!token) throw new UsageError('no token: give --token-file FILE, set SMPPD_TOKEN, or --config FILE with exactly one client');

  return {
    to: values.to!, from: values.from!, text: values.text!, unicode: values.unicode === true,
    url, token, timeoutMs: timeoutS * 1000, json: values.json === true,
  };
}

/** http.listen as a URL to call (https: with http.tls): a wildcard address is reached on loopback. */
export function urlOfListen(host: string, port: number, tls = false): string {
  if (port === 0) throw new UsageError('the config\'s http.listen has port 0 (any free port): give --url');
  const reachable = host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
  return `${tls ? 'https' : 'http'}://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--url must be a URL such as http://127.0.0.1:8080, got '${text}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be http:// or https://, got '${text}'`);
  return url.href.replace(/\/+$/, '');
}

function isParseArgsError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

// --- output ---

/** Human lines (id and statuses on stdout, errors on stderr), or JSON lines, all on stdout. */
class Printer {
  constructor(private readonly json: boolean, private readonly out: (line: string) => void, private readonly err: (line: string) => void) {}

  accepted(messageId: string): void {
    if (this.json) this.out(JSON.stringify({ event: 'accepted', messageId }));
    else this.out(`id ${messageId}`);
  }

  status(messageId: string, v: StatusView, elapsedMs: number): void {
    if (this.json) {
      this.out(JSON.stringify({ event: 'status', messageId, status: v.status, reason: v.reason, parts: v.parts, elapsedMs: Math.round(elapsedMs) }));
      return;
    }
    const parts = v.parts.map((p) => `${p.part} ${p.status}${p.smscMessageId ? ` smsc ${p.smscMessageId}` : ''}`).join(', ');
    const fields = [v.status, `+${(elapsedMs / 1000).toFixed(2)}s`];
    if (v.reason) fields.push(`reason ${v.reason}`);
    if (parts) fields.push(`${v.parts.length === 1 ? 'part' : 'parts'} ${parts}`);
    this.out(fields.join('  '));
  }

  timeout(messageId: string, status: string | null, timeoutMs: number): void {
    if (this.json) {
      this.out(JSON.stringify({ event: 'timeout', messageId, status, timeoutSeconds: timeoutMs / 1000 }));
      return;
    }
    this.err(`smppd send: no final status within ${timeoutMs / 1000} s; last seen ${status ?? 'none'} (the daemon keeps the message; GET /sms/status/${messageId} later)`);
  }

  failure(e: SendFailure): void {
    if (this.json) this.out(JSON.stringify({ event: 'error', ...e.fields, summary: e.message }));
    else this.err(`smppd send: ${e.message}`);
  }
}
