/**
 * The API's listening socket: Node's HTTP or HTTPS server, made for fastify (its
 * `serverFactory`), with the limits that keep a client from holding connections it does not
 * use, and the five-field body on every refusal made before a route runs.
 *
 * - Headers must arrive within `headersTimeoutMs` of a request's first byte (a new connection's
 *   opening): Node's headersTimeout, checked every second. With TLS that clock starts once the
 *   handshake is done, and the handshake has `headersTimeoutMs` of its own (handshakeTimeout), so
 *   a TLS client may take up to twice it from connecting to the end of its headers.
 * - A body must arrive within `requestTimeoutMs` of its headers, sendbulk's within
 *   `bulkRequestTimeoutMs`: RequestDeadlines, one sweep a second on the injected Clock. Node's
 *   requestTimeout is server-wide, so it is only a backstop here, set past the longest deadline.
 *   A response the client does not read has as long again from when it was written; then the
 *   connection is closed (nothing can be answered to a client that does not read).
 * - At most `maxConnections` open connections: Node closes one past it as soon as it is accepted
 *   (its 'drop'), so a flood cannot take every file descriptor. And, when set, at most
 *   `maxConnectionsPerAddress` from one remote address: one past it is closed as soon as it is
 *   accepted, so one client's flood cannot take all of maxConnections from the others.
 * - At most `MAX_PIPELINED` requests waiting behind the one being answered on a connection: one
 *   more closes it, so a client cannot make smppd hold the responses of thousands of requests.
 * - What the HTTP parser refuses (a malformed request line or chunked body: 400; headers too
 *   large: 431; a timeout: 408), an unsupported Expect (417), an HTTP/1.1 request without Host,
 *   any with two Hosts or an invalid one (400, RFC 9112 §3.2), a CONNECT (404) and any request once the server is closing (503) get the five-field
 *   body and close the connection. `requestUri` is the request's path once its headers were read
 *   whole, else ''.
 */
import { createServer as createHttpServer, maxHeaderSize, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Clock } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import { HTTP_LISTENER_DEFAULTS, type HttpConfig } from '../../config/schema.js';
import type { ApiErrorCode } from '../../api/errors.js';
import { ConnectionsPerAddress } from './connections-per-address.js';
import { RequestDeadlines, SWEEP_MS, type DeadlineLimit, type Overdue } from './deadlines.js';
import { errorResponseBytes, pathOf, writeErrorResponse } from './error-replies.js';
import { hostHeaderProblem } from './host-header.js';

/** TLS on the API listener: PEM contents. */
export interface HttpTlsSettings {
  cert: Buffer;
  key: Buffer;
  /** The CA(s) client certificates must be signed by; with requestClientCert. */
  ca?: Buffer;
  /** true: a client certificate signed by `ca` is required; the handshake fails without one. */
  requestClientCert: boolean;
}

export interface HttpListenerSettings {
  /**
   * Milliseconds from a request's first byte (a connection's opening; with TLS, the end of its
   * handshake) to the end of its headers; with TLS, the handshake's own limit too. Default 10,000. > 0.
   */
  headersTimeoutMs: number;
  /**
   * Milliseconds from the end of a request's headers to the end of its body, every route but
   * sendbulk; and from smppd's writing a response to the client's having read it. Default 30,000. > 0.
   */
  requestTimeoutMs: number;
  /** The same for sendbulk. Default 600,000. ≥ requestTimeoutMs. */
  bulkRequestTimeoutMs: number;
  /** Milliseconds an idle keep-alive connection is kept after a response. Default 5,000. > 0. */
  keepAliveTimeoutMs: number;
  /** Open connections at most. Default 1,000. ≥ 1. */
  maxConnections: number;
  /**
   * Open connections from one remote IP address at most; 0: no such cap. Default 0 (behind a load
   * balancer or reverse proxy every connection comes from its address). 0–maxConnections.
   */
  maxConnectionsPerAddress: number;
  /** Absent: plain HTTP. */
  tls?: HttpTlsSettings;
}

/** What the listener counts (the observability layer's `Metrics` has both). */
export interface HttpListenerMetrics {
  /**
   * A request or connection refused before a route ran: the errorCode answered, MAX_CONNECTIONS or
   * MAX_CONNECTIONS_PER_ADDRESS for a connection closed as it was accepted; RESPONSE_NOT_TAKEN, a connection closed because its client did not read a response;
   * PIPELINED_TOO_DEEP, one closed for more requests pipelined than MAX_PIPELINED.
   */
  httpRefused(reason: ApiErrorCode | 'MAX_CONNECTIONS' | 'MAX_CONNECTIONS_PER_ADDRESS' | 'RESPONSE_NOT_TAKEN' | 'PIPELINED_TOO_DEEP'): void;
  /** +1 when a connection opens, -1 when it closes. */
  httpConnections(delta: number): void;
}

export interface HttpListenerDeps {
  clock: Clock;
  log: Log;
  metrics?: HttpListenerMetrics;
}

const S = 1000;

/** The config's `http` section as listener settings. */
export function listenerSettings(http: Omit<HttpConfig, 'listen' | 'host' | 'port' | 'maxBodyBytes' | 'maxUploadBytes' | 'maxBulkNumbers' | 'maxConcurrentUploads' | 'maxResendDays' | 'idempotencyHours'>): HttpListenerSettings {
  return {
    headersTimeoutMs: http.headersTimeoutSeconds * S,
    requestTimeoutMs: http.requestTimeoutSeconds * S,
    bulkRequestTimeoutMs: http.bulkRequestTimeoutSeconds * S,
    keepAliveTimeoutMs: http.keepAliveTimeoutSeconds * S,
    maxConnections: http.maxConnections,
    maxConnectionsPerAddress: http.maxConnectionsPerAddress,
    ...(http.tls ? { tls: http.tls } : {}),
  };
}

/** The config's defaults, for a server built without a configuration (tests). */
export const DEFAULT_LISTENER: HttpListenerSettings = listenerSettings(HTTP_LISTENER_DEFAULTS);

/** The route bulk.ts registers: its upload gets the longer deadline. */
const BULK_PATH = '/sms/sendbulk';

/**
 * Requests a connection may have waiting behind the response under way (HTTP/1.1 pipelining, RFC
 * 9112 §9.3.2). Node parses every request in what it has read before it stops reading, and
 * holds each one's response until the client has read those before it, so without a bound a
 * client that pipelines thousands of requests and reads nothing makes smppd hold all their
 * responses. Few clients pipeline at all (browsers and curl never; undici only when told to),
 * and none this deep; one more closes the connection (it cannot be answered: the client is not
 * reading what is ahead of it).
 */
const MAX_PIPELINED = 16;

/** A warning about connections closed at a cap: at most one per this many milliseconds, per cap. */
const DROP_WARN_MS = 60_000;

/** An error of the HTTP parser or of Node's connection checks, as 'clientError' gives it. */
type ClientError = Error & { code?: unknown; reason?: unknown };

export class HttpListener {
  readonly #settings: HttpListenerSettings;
  readonly #deps: HttpListenerDeps;
  readonly #deadlines: RequestDeadlines;
  readonly #short: DeadlineLimit;
  readonly #bulk: DeadlineLimit;
  readonly #perAddress: ConnectionsPerAddress | undefined;
  readonly #dropWarning: DropWarning;
  readonly #addressDropWarning: DropWarning;
  #closing = false;
  /** Per connection, the requests waiting behind the response under way (pipelined); none: absent. */
  readonly #pipelined = new WeakMap<Socket, number>();

  constructor(settings: HttpListenerSettings, deps: HttpListenerDeps) {
    this.#settings = settings;
    this.#deps = deps;
    this.#short = { ms: settings.requestTimeoutMs, message: `the request body did not arrive within ${settings.requestTimeoutMs / S} s of its headers (http.requestTimeoutSeconds)` };
    this.#bulk = { ms: settings.bulkRequestTimeoutMs, message: `the upload did not arrive within ${settings.bulkRequestTimeoutMs / S} s of its headers (http.bulkRequestTimeoutSeconds)` };
    this.#deadlines = new RequestDeadlines(deps.clock, this.#expired);
    this.#perAddress = settings.maxConnectionsPerAddress > 0 ? new ConnectionsPerAddress(settings.maxConnectionsPerAddress) : undefined;
    this.#dropWarning = new DropWarning(deps, 'http_max_connections',
      'http.maxConnections reached: new connections are closed as they arrive (dropped: since the last such line)');
    this.#addressDropWarning = new DropWarning(deps, 'http_max_connections_per_address',
      'http.maxConnectionsPerAddress reached by an address: its new connections are closed as they arrive (dropped: since the last such line, of every address; address: the last)');
  }

  /** The server is closing: every request from now on is answered 503 SHUTTING_DOWN. */
  beginClose(): void {
    this.#closing = true;
  }

  /** fastify's `serverFactory`: the server, with `handler` (fastify's router) behind the checks. */
  readonly serverFactory = (handler: (req: IncomingMessage, res: ServerResponse) => void): Server => {
    const s = this.#settings;
    const options: ServerOptions = {
      headersTimeout: s.headersTimeoutMs,
      // A backstop past the longest deadline (headers, then a sendbulk body, answered up to two
      // sweeps late), so RequestDeadlines answers first, with the request's own limit.
      requestTimeout: s.headersTimeoutMs + s.bulkRequestTimeoutMs + 4 * SWEEP_MS,
      // Node checks headersTimeout (and the backstop) this often: a late request is closed at most this late.
      connectionsCheckingInterval: SWEEP_MS,
      keepAliveTimeout: s.keepAliveTimeoutMs,
      // Checked in #accept, so that the 400 has the five-field body.
      requireHostHeader: false,
    };
    const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
      if (this.#accept(req, res)) handler(req, res);
    };
    const tls = s.tls;
    const server = tls
      ? createHttpsServer({
        ...options, cert: tls.cert, key: tls.key,
        // A connection that never finishes its handshake is held no longer than one that never sends its headers.
        handshakeTimeout: s.headersTimeoutMs,
        ...(tls.requestClientCert ? { ca: tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
      }, onRequest)
      : createHttpServer(options, onRequest);
    server.maxConnections = s.maxConnections;
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
      this.#refuse(res, 'EXPECTATION_FAILED', 'the Expect header asks for what this server does not do: only 100-continue is supported', req);
    });
    // Without a listener Node closes a CONNECT's socket without a byte. Its target is a host and
    // port, not a path of ours: requestUri stays ''.
    server.on('connect', (_req: IncomingMessage, socket: Socket) => {
      this.#deps.metrics?.httpRefused('NOT_FOUND');
      if (socket.writable) socket.write(errorResponseBytes('NOT_FOUND', 'no route CONNECT: smppd is not a proxy', ''));
      socket.destroy();
    });
    server.on('drop', this.#drop);
    if (this.#perAddress !== undefined || this.#deps.metrics !== undefined) server.on('connection', this.#connected);
    server.on('close', () => this.#deadlines.stop());
    return server;
  };

  /**
   * fastify's `clientErrorHandler`: Node's 'clientError', for a request the parser refused or that
   * timed out. Other errors (a reset, a failed TLS handshake) have no one to answer.
   */
  readonly clientErrorHandler = (error: ClientError, socket: Socket): void => {
    const inFlight = responseOn(socket);
    const refusal = socket.destroyed ? undefined : this.#parserRefusal(error, inFlight);
    if (refusal === undefined) {
      socket.destroy();
      return;
    }
    this.#deps.metrics?.httpRefused(refusal.code);
    // As Node's own handler: no second status line once a response has begun on this socket.
    if (socket.writable && inFlight?.headersSent !== true) socket.write(errorResponseBytes(refusal.code, refusal.message, requestUriOf(inFlight)));
    socket.destroy();
  };

  /** Whether fastify may route the request; otherwise it has been answered, or its connection closed. */
  #accept(req: IncomingMessage, res: ServerResponse): boolean {
    const socket = req.socket;
    // Closed for pipelining too deep: Node still hands on the requests left in what it had read.
    if (socket.destroyed) return false;
    // Waiting behind the response under way on its connection: pipelined.
    if (responseOn(socket) !== res && !this.#queueBehind(socket, res)) return false;
    if (this.#closing) {
      this.#refuse(res, 'SHUTTING_DOWN', 'smppd is stopping and takes no new request: retry on a new connection', req);
      return false;
    }
    const hostProblem = hostHeaderProblem(req);
    if (hostProblem !== undefined) {
      this.#refuse(res, 'BAD_REQUEST', hostProblem, req);
      return false;
    }
    const url = req.url ?? '';
    const bulk = url.startsWith(BULK_PATH) && (url.length === BULK_PATH.length || url[BULK_PATH.length] === '?');
    this.#deadlines.watch(req, res, bulk ? this.#bulk : this.#short);
    return true;
  }

  /** Counts a pipelined request on `socket` until its response is sent; past MAX_PIPELINED, closes the connection. */
  #queueBehind(socket: Socket, res: ServerResponse): boolean {
    const queued = (this.#pipelined.get(socket) ?? 0) + 1;
    if (queued > MAX_PIPELINED) {
      this.#deps.metrics?.httpRefused('PIPELINED_TOO_DEEP');
      socket.destroy();
      return false;
    }
    this.#pipelined.set(socket, queued);
    res.once('finish', () => this.#pipelined.set(socket, (this.#pipelined.get(socket) ?? 1) - 1));
    return true;
  }

  #refuse(res: ServerResponse, code: ApiErrorCode, message: string, req: IncomingMessage): void {
    this.#deps.metrics?.httpRefused(code);
    writeErrorResponse(res, code, message, pathOf(req.url ?? ''));
  }

  readonly #expired = (req: IncomingMessage, res: ServerResponse, limit: DeadlineLimit, overdue: Overdue): void => {
    if (overdue === 'response') {
      // The client is not reading: nothing more can be written to it, only the connection closed.
      this.#deps.metrics?.httpRefused('RESPONSE_NOT_TAKEN');
      req.socket.destroy();
      return;
    }
    if (res.headersSent) {
      // Answered already (a 401 before the body was read, say): only the connection is left to close.
      req.socket.destroy();
      return;
    }
    this.#refuse(res, 'REQUEST_TIMEOUT', limit.message, req);
  };

  /** What the parser's (or Node's timeout's) error is answered with; undefined: nothing, close. */
  #parserRefusal(error: ClientError, inFlight: ServerResponse | undefined): { code: ApiErrorCode; message: string } | undefined {
    const code = typeof error.code === 'string' ? error.code : '';
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      return inFlight
        ? { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive whole in time' }
        : { code: 'REQUEST_TIMEOUT', message: `the request headers did not arrive within ${this.#settings.headersTimeoutMs / S} s (http.headersTimeoutSeconds)` };
    }
    if (code === 'HPE_HEADER_OVERFLOW') return { code: 'HEADERS_TOO_LARGE', message: `the request line and headers are larger than ${maxHeaderSize} bytes` };
    if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return { code: 'PAYLOAD_TOO_LARGE', message: 'the chunk extensions of the body are larger than this server takes' };
    // llhttp's reasons are fixed texts ("Invalid method encountered"), never the request's bytes.
    if (code.startsWith('HPE_')) return { code: 'BAD_REQUEST', message: `malformed HTTP request: ${typeof error.reason === 'string' ? error.reason : code}` };
    return undefined;
  }

  readonly #drop = (): void => {
    this.#deps.metrics?.httpRefused('MAX_CONNECTIONS');
    this.#dropWarning.note({ maxConnections: this.#settings.maxConnections });
  };

  /**
   * A connection accepted (a TCP one: with TLS, before its handshake): closed at once when its
   * address already holds maxConnectionsPerAddress, else counted until it closes.
   */
  readonly #connected = (socket: Socket): void => {
    const perAddress = this.#perAddress;
    // undefined once the socket is closed (a reset before this ran): nothing to count or refuse.
    const address = socket.remoteAddress;
    if (perAddress !== undefined && address !== undefined) {
      if (!perAddress.open(address)) {
        this.#deps.metrics?.httpRefused('MAX_CONNECTIONS_PER_ADDRESS');
        this.#addressDropWarning.note({ maxConnectionsPerAddress: this.#settings.maxConnectionsPerAddress, address });
        socket.destroy();
        return;
      }
      socket.once('close', () => perAddress.close(address));
    }
    const metrics = this.#deps.metrics;
    if (metrics) {
      metrics.httpConnections(1);
      socket.once('close', () => metrics.httpConnections(-1));
    }
  };
}

/** A warning about connections closed at a cap: the first at once, then at most one per DROP_WARN_MS, with the count since the last. */
class DropWarning {
  readonly #deps: HttpListenerDeps;
  readonly #event: string;
  readonly #message: string;
  #dropped = 0;
  #warnedAt: number | undefined;

  constructor(deps: HttpListenerDeps, event: string, message: string) {
    this.#deps = deps;
    this.#event = event;
    this.#message = message;
  }

  note(fields: object): void {
    this.#dropped++;
    const now = this.#deps.clock.now();
    if (this.#warnedAt !== undefined && now - this.#warnedAt < DROP_WARN_MS) return;
    this.#deps.log.warn({ event: this.#event, ...fields, dropped: this.#dropped }, this.#message);
    this.#warnedAt = now;
    this.#dropped = 0;
  }
}

/**
 * The response under way on the socket: Node's own 'clientError' default reads the same field
 * (`_httpMessage`) to decide whether a status line may still be written.
 */
function responseOn(socket: Socket): ServerResponse | undefined {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined;
}

/**
 * The path of the request under way (its headers were read whole: a bad chunked body, a body
 * too slow), or '' when the parser refused it before that (a malformed request line, headers
 * too large or too slow): what a half-read request line says is not trusted.
 */
function requestUriOf(inFlight: ServerResponse | undefined): string {
  const url = inFlight?.req?.url;
  return url === undefined ? '' : pathOf(url);
}
