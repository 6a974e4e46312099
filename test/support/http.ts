/**
 * The HTTP API under test: the real Acceptor (composing real submit_sm parts) over a store,
 * fastify built by `buildHttpServer`, a ManualClock for wall time, and a log that keeps every
 * line so tests can prove no token reaches it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiClient } from '../../src/api/auth.js';
import { ManualClock, SystemClock } from '../../src/core/clock.js';
import type { Log } from '../../src/core/log.js';
import { Acceptor } from '../../src/dispatch/accept.js';
import type { ComposeSettings } from '../../src/dispatch/compose.js';
import { DEFAULT_LISTENER } from '../../src/ingress/http/listener.js';
import { buildHttpServer, type HttpListenerSettings } from '../../src/ingress/http/server.js';
import { identify } from '../../src/sms/identify.js';
import type { Readiness } from '../../src/observability/health.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { AcceptRequest, NewMessage } from '../../src/store/intake.js';
import type { Store } from '../../src/store/store.js';

/**
 * The store the HTTP tests run on: the real SQLite store, on a file in a fresh temporary folder.
 * It gets the system clock for its group-commit timer (the ManualClock of the tests only gives
 * wall time to the acceptor and the routes; the store reads no time of its own).
 */
export async function openTestStore(): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-http-'));
  const store = await SqliteStore.open({ path: join(dir, 'smppd.db'), clock: new SystemClock() });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const TOKENS = {
  app: 'app-token-0123456789abcdef',
  limited: 'limited-token-0123456789abcdef',
  other: 'other-token-0123456789abcdef',
} as const;

export const CLIENTS: ApiClient[] = [
  { name: 'app', token: TOKENS.app },
  { name: 'limited', token: TOKENS.limited, senders: ['MyBrand'] },
  { name: 'other', token: TOKENS.other },
];

export const COMPOSE: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
};

/** 2026-01-01T00:00:00Z: the ManualClock's wall start. */
export const WALL_START = Date.UTC(2026, 0, 1);

export interface HarnessOptions {
  maxQueued?: number;
  /** clients[].maxQueued by client name. */
  clientMaxQueued?: Record<string, number>;
  maxBulkNumbers?: number;
  /** http.maxConcurrentUploads. */
  maxConcurrentUploads?: number;
  maxBodyBytes?: number;
  maxUploadBytes?: number;
  bulkChunkSize?: number;
  /** Clients that have a webhook: their messages write events, and resendDlr and /events/dead serve them. */
  webhookClients?: string[];
  /** The listener's timeouts, maxConnections and TLS; the rest as the config's defaults. */
  listener?: Partial<HttpListenerSettings>;
  /** In place of CLIENTS (same tokens: the log is checked for those). */
  clients?: ApiClient[];
  /** http.maxResendDays. */
  maxResendDays?: number;
  /** What GET /metrics answers. Default: one comment line. */
  metricsText?: string;
  /** Serve the MCP server at /mcp (config mcp.enabled). */
  mcp?: boolean;
}

/** A Log that keeps each line as JSON text. */
export function recordingLog(lines: string[], fields: object = {}): Log {
  const put = (level: string) => (f: object, m: string): void => { lines.push(JSON.stringify({ level, ...fields, ...f, msg: m })); };
  return { error: put('error'), warn: put('warn'), info: put('info'), debug: put('debug'), child: (f) => recordingLog(lines, { ...fields, ...f }) };
}

export async function httpHarness(o: HarnessOptions = {}) {
  const clock = new ManualClock();
  const { store, cleanup } = await openTestStore();
  // Every chunk the store commits, in order; `onAccept` listeners run after each commit.
  const acceptSizes: number[] = [];
  const acceptedMessages: NewMessage[] = [];
  const onAccept: Array<() => void> = [];
  const accept = store.accept.bind(store);
  store.accept = async (r: AcceptRequest) => {
    const accepted = await accept(r);
    acceptSizes.push(r.messages.length);
    acceptedMessages.push(...r.messages);
    for (const listener of onAccept) listener();
    return accepted;
  };
  const wantsEvents = (client: string): boolean => o.webhookClients?.includes(client) ?? false;
  const acceptor = new Acceptor({
    store, clock, upstreams: [{ name: 'sim', compose: COMPOSE }], maxQueued: o.maxQueued ?? 1_000_000, wantsEvents,
    clientMaxQueued: new Map(Object.entries(o.clientMaxQueued ?? {})),
  });
  const logs: string[] = [];
  const wakes = { count: 0 };
  const health = { current: { ready: true, reasons: [] as string[], upstreams: [] as Readiness['upstreams'] } };
  const requests: string[] = [];
  // What the listener refused before a route ran (errorCode or MAX_CONNECTIONS), and its open connections.
  const refused: string[] = [];
  const connections = { open: 0 };
  const rateLimited: string[] = [];
  const app = buildHttpServer({
    acceptor, store, identify, clients: o.clients ?? CLIENTS, clock, log: recordingLog(logs), onRateLimited: (client) => { rateLimited.push(client); },
    events: { hasWebhook: wantsEvents, wake: () => { wakes.count++; } },
    health: { readiness: () => health.current },
    metrics: { contentType: 'text/plain; version=0.0.4; charset=utf-8', text: async () => o.metricsText ?? '# smppd test metrics\n' },
    onRequestDone: (route, method, status) => { requests.push(`${method} ${route} ${status}`); },
    limits: {
      maxBodyBytes: o.maxBodyBytes ?? 1024 * 1024, maxUploadBytes: o.maxUploadBytes ?? 50 * 1024 * 1024, maxBulkNumbers: o.maxBulkNumbers ?? 1_000_000,
      ...(o.bulkChunkSize !== undefined ? { bulkChunkSize: o.bulkChunkSize } : {}), ...(o.maxResendDays !== undefined ? { maxResendDays: o.maxResendDays } : {}),
      ...(o.maxConcurrentUploads !== undefined ? { maxConcurrentUploads: o.maxConcurrentUploads } : {}),
    },
    listener: { ...DEFAULT_LISTENER, ...o.listener },
    listenerMetrics: { httpRefused: (reason) => { refused.push(reason); }, httpConnections: (delta) => { connections.open += delta; } },
    ...(o.mcp ? { mcp: { version: '0.0.0-test' } } : {}),
  });
  await app.ready();
  return {
    app, store, clock, acceptor, logs, acceptSizes, acceptedMessages, onAccept, wakes, health, requests, refused, connections, rateLimited,
    /** Closes the server and the store; fails the test if any token reached the log. */
    async close() {
      await app.close();
      await cleanup();
      const logged = logs.join('\n');
      const leaked = Object.entries(TOKENS).filter(([, token]) => logged.includes(token)).map(([name]) => name);
      if (leaked.length > 0) throw new Error(`the log holds the token of client(s) ${leaked.join(', ')}`);
    },
  };
}

export type Harness = Awaited<ReturnType<typeof httpHarness>>;

/** The harness listening on 127.0.0.1 at a free port, for tests over a real socket. */
export async function listeningHarness(o: HarnessOptions = {}): Promise<{ h: Harness; port: number; base: string }> {
  const h = await httpHarness(o);
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = h.app.server.address() as AddressInfo;
  return { h, port, base: `http://127.0.0.1:${port}` };
}

export const bearer = (token: string = TOKENS.app) => ({ authorization: `Bearer ${token}` });

export interface FormPart {
  name: string;
  value: string | Buffer;
  filename?: string;
  contentType?: string;
}

export const BOUNDARY = '----smppd-test-boundary-7MA4YWxkTrZu0gW';

/** A multipart/form-data body, parts in the given order. */
export function multipart(parts: FormPart[]): { payload: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += '\r\n';
    if (p.contentType !== undefined || p.filename !== undefined) head += `Content-Type: ${p.contentType ?? 'text/plain'}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.from(p.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } };
}

/** A bulk upload: bulkRequest first, then the file. */
export function bulkForm(request: object, file: string, filename = 'numbers.csv'): { payload: Buffer; headers: Record<string, string> } {
  return multipart([
    { name: 'bulkRequest', value: JSON.stringify(request) },
    { name: 'destinationNumberFile', value: file, filename },
  ]);
}

/** The five-field body's keys, in order. */
export const ERROR_FIELDS = ['status', 'error', 'message', 'errorCode', 'requestUri'];
