/**
 * The local HTTP API: the provider's SMS REST API (messaging-service-api.md §4.1, §5, §7) on a
 * local address, so an application switches from REST to SMPP by changing its base address.
 *
 * `buildHttpServer(deps)` returns the fastify instance, routes registered, not listening:
 * `smppd start` calls `listen({ host, port })` with `http.listen` and `close()` when it stops;
 * tests call `inject()`. Every route under /sms needs a bearer token; /openapi.json does not; the
 * admin API under /admin (when the config has `admin`) needs an admin's (admin/admin-auth.ts),
 * and the status page at /admin/ signs a browser in with one (admin-ui/admin-page-routes.ts).
 * The MCP server at /mcp (when the config has `mcp.enabled`) takes the clients' tokens (mcp.ts).
 * The server it listens with is the HttpListener's (listener.ts): timeouts, maxConnections, TLS,
 * and the five-field body for what is refused before a route runs. `buildMetricsServer` is
 * GET /metrics alone on such a listener, for `metrics.listen`.
 */
import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { Log } from '../../core/log.js';
import { ClientRateLimiter } from '../../api/client-rate-limiter.js';
import { IDEMPOTENCY_HOURS } from '../../config/http-schema.js';
import { IdempotencyGate } from '../../dispatch/idempotency.js';
import { ApiError } from '../../api/errors.js';
import { registerAdminScope } from './admin/admin-routes.js';
import { registerAdminPage } from './admin-ui/admin-page-routes.js';
import { Authenticator } from './authenticator.js';
import { registerBatchRoutes } from './batches.js';
import { registerBulkRoutes } from './bulk.js';
import type { HttpServerDeps, RouteContext } from './context.js';
import { errorHandler, notFoundHandler, requestPath, sendError, toHttpError, unsupportedMediaType } from './error-replies.js';
import { registerEventRoutes } from './events.js';
import { registerHealthRoutes, registerMetricsRoute, type HttpMetricsSource } from './health.js';
import { DEFAULT_LISTENER, HttpListener, type HttpListenerSettings } from './listener.js';
import { openApiDocument } from './openapi.js';
import { rateLimitHook, sendTokens } from './rate-limit.js';
import { registerScheduleRoutes } from './schedules.js';
import { registerSendRoutes } from './send.js';
import { KeyedSerial } from './serial.js';
import { RouteMethods, type RouteEntry } from './route-methods.js';
import { registerStatusRoutes } from './status.js';

export { AdminAuth, type AdminIdentity, type AdminRefusal, type SessionLookup } from './admin/admin-auth.js';
export type { AdminHttpDeps } from './admin/admin-context.js';
export { Authenticator } from './authenticator.js';
export { registerMetricsRoute, type HttpHealth, type HttpMetricsSource } from './health.js';
export type { HttpAcceptor, HttpBulkWriter, HttpEvents, HttpLimits, HttpServerDeps, HttpStore } from './context.js';
export { listenerSettings, type HttpListenerMetrics, type HttpListenerSettings, type HttpTlsSettings } from './listener.js';

export type { RouteEntry } from './route-methods.js';

const routesOf = new WeakMap<FastifyInstance, RouteMethods>();

/** The routes a server registered (for the OpenAPI test and for logs). */
export function listRoutes(app: FastifyInstance): readonly RouteEntry[] {
  return routesOf.get(app)?.routes ?? [];
}

/**
 * A fastify instance that listens through `listener` (its limits, and the five-field body for
 * what it refuses), with the five-field body for what fastify or a route refuses too.
 */
function fastifyOn(listener: HttpListener, log: Log, bodyLimit?: number): FastifyInstance {
  const app = Fastify({
    logger: false,
    ...(bodyLimit !== undefined ? { bodyLimit } : {}),
    // GET only: a HEAD twin of each GET would be one more route to describe and keep true.
    exposeHeadRoutes: false,
    serverFactory: listener.serverFactory,
    clientErrorHandler: listener.clientErrorHandler,
    // The listener answers 503 from preClose on, with the five-field body.
    return503OnClosing: false,
    // A request fastify cannot route (a malformed URL) still gets the five-field body.
    frameworkErrors: (error, request, reply) => { sendError(reply, request, toHttpError(error).error); },
  });
  app.addHook('preClose', (done) => {
    listener.beginClose();
    done();
  });
  app.setErrorHandler(errorHandler(log));
  const routes = new RouteMethods();
  routesOf.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.add({ method, url: route.url });
  });
  app.setNotFoundHandler(notFoundHandler(routes));
  return app;
}

/** Open connections at most on the metrics listener of its own (metrics.listen): scrapers, and an operator's curl. */
export const METRICS_MAX_CONNECTIONS = 16;

/**
 * GET /metrics alone, for `metrics.listen`: plain HTTP, on a listener with the API listener's
 * timeouts and defences (no deep pipelining, no reader holding a response for good), and at most
 * METRICS_MAX_CONNECTIONS connections, so that a flood on this port cannot take the descriptors
 * the API's http.maxConnections keeps for binds and webhooks. Not listening yet.
 */
export function buildMetricsServer(metrics: HttpMetricsSource, settings: HttpListenerSettings, clock: Clock, log: Log): FastifyInstance {
  const { tls: _tls, ...plain } = settings;
  const listener = new HttpListener({
    ...plain, maxConnections: METRICS_MAX_CONNECTIONS,
    maxConnectionsPerAddress: Math.min(plain.maxConnectionsPerAddress, METRICS_MAX_CONNECTIONS),
  }, { clock, log });
  const app = fastifyOn(listener, log);
  registerMetricsRoute(app, metrics);
  return app;
}

export function buildHttpServer(deps: HttpServerDeps): FastifyInstance {
  const log = deps.log.child({ component: 'http' });
  const listener = new HttpListener(deps.listener ?? DEFAULT_LISTENER, {
    clock: deps.clock, log, ...(deps.listenerMetrics ? { metrics: deps.listenerMetrics } : {}),
  });
  const app = fastifyOn(listener, log, deps.limits.maxBodyBytes);

  // JSON, and multipart for sendbulk; any other Content-Type is 415. An empty JSON body is
  // no body (send-now takes its id from the query or the body). Multipart is read by sendbulk
  // alone, so @fastify/multipart is registered in its scope only (its onResponse hook would
  // otherwise run on every request); elsewhere a multipart body is 415 too.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new ApiError('INVALID_JSON', 'the body is not valid JSON'), undefined);
    }
    // Outside the try: an error thrown further down the route is not bad JSON.
    done(null, parsed);
  });
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(unsupportedMediaType(), undefined));

  // A callback hook, not an async one: no promise per request.
  const counted = deps.onRequestDone;
  app.addHook('onResponse', (request, reply, done) => {
    // Method, path and status only: never a header (the token), never the query or body.
    log.debug({ event: 'http_request', method: request.method, path: requestPath(request), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'HTTP request');
    // The route's pattern (/sms/status/:messageId), not the path: one series per route.
    counted?.(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const auth = deps.authenticator ?? new Authenticator(deps.clients);
  const limiter = deps.rateLimiter ?? new ClientRateLimiter(deps.clients, deps.clock);
  const takeSendToken = sendTokens(limiter, deps.onRateLimited);
  const ctx: RouteContext = {
    deps, auth, limitRate: rateLimitHook(auth, takeSendToken, deps.limits.maxBodyBytes), takeSendToken, serial: new KeyedSerial(),
    idempotency: { gate: new IdempotencyGate({ store: deps.store, clock: deps.clock }), keepMs: (deps.limits.idempotencyHours ?? IDEMPOTENCY_HOURS) * 3_600_000 },
  };
  const openApi = openApiDocument({ admin: deps.admin !== undefined, metrics: deps.metrics !== undefined, readiness: deps.health !== undefined });
  app.get('/openapi.json', async () => openApi);
  registerHealthRoutes(app, deps.health, deps.metrics);
  void app.register(async (scope) => {
    auth.guard(scope);
    registerSendRoutes(scope, ctx);
    void scope.register(async (bulk) => {
      bulk.removeContentTypeParser('multipart/form-data');
      await bulk.register(fastifyMultipart, { limits: { fileSize: deps.limits.maxUploadBytes, fieldSize: deps.limits.maxBodyBytes } });
      registerBulkRoutes(bulk, ctx);
    });
    registerBatchRoutes(scope, ctx);
    registerScheduleRoutes(scope, ctx);
    registerStatusRoutes(scope, ctx);
    registerEventRoutes(scope, ctx);
  });
  const mcp = deps.mcp;
  if (mcp) {
    // Loaded only when enabled: the SDK costs every start about a tenth of a second otherwise.
    void app.register(async (scope) => (await import('./mcp.js')).registerMcpRoutes(scope, ctx, mcp));
  }
  const admin = deps.admin;
  if (admin) {
    const page = { auth: admin.auth, status: () => admin.status(), clock: deps.clock, log, secure: deps.listener?.tls !== undefined };
    void app.register(async (scope) => registerAdminScope(scope, admin, (s) => registerAdminPage(s, page)), { prefix: '/admin' });
  }
  return app;
}
