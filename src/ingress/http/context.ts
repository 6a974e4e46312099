/**
 * What the routes are given: the daemon's objects (as narrow interfaces: the HTTP layer needs
 * the store's roles it uses, not the store), and the per-server helpers.
 */
import type { Clock } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import type { BulkCommon, SendOptions, SendRequest } from '../../dispatch/accept.js';
import type { IdempotencyGate } from '../../dispatch/idempotency.js';
import type { IdentifyResult } from '../../sms/identify.js';
import type { BatchesAndSchedules } from '../../store/batches.js';
import type { EventResends } from '../../store/event-resends.js';
import type { IdempotencyKeys, NewIdempotencyKey } from '../../store/idempotency.js';
import type { StatusReads } from '../../store/status-reads.js';
import type { ApiClient } from '../../api/auth.js';
import type { ClientRateLimiter } from '../../api/client-rate-limiter.js';
import type { AdminHttpDeps } from './admin/admin-context.js';
import type { Authenticator } from './authenticator.js';
import type { HttpHealth, HttpMetricsSource } from './health.js';
import type { HttpListenerMetrics, HttpListenerSettings } from './listener.js';
import type { RateLimitHook, SendTokens } from './rate-limit.js';
import type { KeyedSerial } from './serial.js';

/** The Acceptor's part the API uses (`src/dispatch/accept.ts`). */
export interface HttpAcceptor {
  /** Resolves after the commit (which records `options.idempotencyKey`); throws SmppdError QUEUE_FULL, TEXT_NOT_GSM7, MESSAGE_TOO_LONG, … */
  send(request: SendRequest, options?: SendOptions): Promise<{ messageId: string; batchId: number | null }>;
  /** Checks the text once, and that no cap on queued parts is reached; then `reserve` and `add` store the numbers. */
  startBulk(common: BulkCommon): Promise<HttpBulkWriter>;
}

/** The BulkWriter's part the API uses. */
export interface HttpBulkWriter {
  /** Throws NO_ROUTE (400) when a route takes none of some of the numbers: the job is refused whole. */
  checkRoutes(chunks: Iterable<readonly string[]>): void;
  /** Holds room for all the job's messages before any is stored; throws QUEUE_FULL (429) when they do not fit. */
  reserve(numbers: number): Promise<void>;
  /** Stores one chunk of valid, de-duplicated numbers (within the reserved room); the first call creates the batch. */
  add(destinations: readonly string[]): Promise<void>;
  /** The job's Idempotency-Key, recorded pending with the first chunk; before the first `add`. */
  keyedBy(key: NewIdempotencyKey): void;
  /** Gives back the room not used; once the job is over, however it ended. */
  close(): void;
  readonly batchId: number | null;
  readonly scheduleId: number | null;
  /** The parts the job's messages make, segments × valid numbers by each number's route: the `credits` it costs. */
  readonly parts: number;
}

/** The store's part the API reads and changes (writes go through the acceptor, idempotency keys with them). */
export type HttpStore = Pick<StatusReads, 'getMessage'> & BatchesAndSchedules & EventResends & IdempotencyKeys;

/** The webhook dispatcher's part the API uses (`src/events/event-dispatcher.ts`). */
export interface HttpEvents {
  /** Whether the client has a webhook. */
  hasWebhook(client: string): boolean;
  /** Events were queued: deliver them now rather than at the next poll. */
  wake(): void;
}

export interface HttpLimits {
  /** Largest JSON body, bytes (http.maxBodyBytes). Larger: 413. */
  maxBodyBytes: number;
  /** Largest sendbulk number file, bytes (http.maxUploadBytes). Larger: 413. */
  maxUploadBytes: number;
  /** Numbers one sendbulk file may hold, valid ones counted with their repeats (http.maxBulkNumbers, ≥ 1). More: 413. */
  maxBulkNumbers: number;
  /**
   * sendbulk uploads in progress at once, all clients (http.maxConcurrentUploads, ≥ 1); one client
   * at most half of them (≥ 1). More: 429 TOO_MANY_UPLOADS. Default 4.
   */
  maxConcurrentUploads?: number;
  /** Numbers per committed chunk of a sendbulk upload. Default 1000. */
  bulkChunkSize?: number;
  /** Longest date range of one resendDlr, days (http.maxResendDays). Longer: 400. Default 7. */
  maxResendDays?: number;
  /** Hours an Idempotency-Key is kept (http.idempotencyHours): its repeats are answered the first's result. Default 24. */
  idempotencyHours?: number;
}

/** Everything `buildHttpServer` needs; `smppd start` builds each one. */
export interface HttpServerDeps {
  /** Validates, composes and stores sends (the dispatch layer's Acceptor). */
  acceptor: HttpAcceptor;
  /** Reads messages, batches and schedules; changes batch and schedule states. */
  store: HttpStore;
  /** Webhooks: resendDlr and the dead events. */
  events: HttpEvents;
  /**
   * POST /sms/identify: the text as the upstream that `destination` (absent: any number) would
   * route to now for `client` would send it (the domain's `identify` with that upstream's rules).
   */
  identify: (text: string, client: string, destination?: string) => IdentifyResult;
  /** Who may call (config `clients`). Names and tokens unique (the config checks it). */
  clients: readonly ApiClient[];
  /** Wall time for schedules and state changes; the listener's body deadlines (monotonic time and one sweep timer). */
  clock: Clock;
  log: Log;
  limits: HttpLimits;
  /** The daemon's authenticator, so SIGHUP can replace its clients; default: one built from `clients`. */
  authenticator?: Authenticator;
  /** The clients' rate limits, shared with the queue ingress; default: one built from `clients`. */
  rateLimiter?: ClientRateLimiter;
  /** Counts each send request refused for its client's rate limit. */
  onRateLimited?: (client: string) => void;
  /** GET /readyz; absent: not served. */
  health?: HttpHealth;
  /** GET /metrics on this port; absent: not served here (metrics.listen moves it, or tests). */
  metrics?: HttpMetricsSource;
  /** Counts each request by route pattern, method and status. */
  onRequestDone?: (route: string, method: string, status: number, seconds: number) => void;
  /** Timeouts, maxConnections and TLS of the listening server. Default: the config's defaults, plain HTTP. */
  listener?: HttpListenerSettings;
  /** Counts refusals made before a route runs, and open connections. */
  listenerMetrics?: HttpListenerMetrics;
  /** The admin API under /admin (config `admin`); absent: not served (404, as any unknown path). */
  admin?: AdminHttpDeps;
  /** The MCP server at /mcp (config `mcp.enabled`), naming itself with `version`; absent: not served (404). */
  mcp?: { version: string };
}

/** What each route module is given. */
export interface RouteContext {
  deps: HttpServerDeps;
  auth: Authenticator;
  /** The send routes' onRequest hook: 429 past the client's rate limit. */
  limitRate: RateLimitHook;
  /** One send's token of a client, or the RATE_LIMITED refusal: what `limitRate` does, for a send that is no request of its own (MCP's send_sms). */
  takeSendToken: SendTokens;
  /** Orders state changes per batch and per schedule. */
  serial: KeyedSerial;
  /** Requests with an Idempotency-Key: run once, repeats answered what the first recorded. */
  idempotency: HttpIdempotency;
}

/** What the send routes use for Idempotency-Key. */
export interface HttpIdempotency {
  gate: IdempotencyGate;
  /** How long a key is kept, ms (http.idempotencyHours). */
  keepMs: number;
}
