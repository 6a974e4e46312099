/**
 * The OpenAPI 3.1 description of the local API, served at GET /openapi.json. Its schemas are
 * generated from the zod schemas that validate the requests and type the replies
 * (openapi-schemas.ts), and the errorCode enum from API_ERRORS; a test checks that every
 * registered route is described and every described route is registered, lints the document,
 * and validates real replies of every operation against it.
 */
import { IDEMPOTENCY_KEY_RULE } from '../../api/idempotency-key.js';
import { aliveSchema, deadResendResultSchema, notReadySchema, readySchema, resendDlrResultSchema } from '../../api/responses.js';
import { adminPaths, adminSchemas, adminSecurityScheme } from './admin/admin-openapi.js';
import { adminPagePaths, adminSessionScheme } from './admin-ui/page-openapi.js';
import { componentSchemas, jsonSchema, PARAMETER_SCHEMAS, type Json } from './openapi-schemas.js';

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });
const str = { type: 'string' } as const;
const int = { type: 'integer', minimum: 0 } as const;

const errorResponse = (description: string): Json => ({ description, content: json(ref('ErrorBody')) });
const retryAfter = { 'Retry-After': { required: true, schema: int, description: 'Seconds.' } };
const responses: Json = {
  BadRequest: errorResponse('Validation error, bad JSON or bad multipart (errorCode says which).'),
  Unauthorized: {
    description: 'Missing or invalid bearer token (§5, §7): the gateway\'s two-field body.',
    headers: { 'WWW-Authenticate': { required: true, schema: { type: 'string', const: 'Bearer' }, description: 'The scheme to authenticate with (RFC 6750 §3).' } },
    content: json(ref('UnauthorizedBody')),
  },
  Forbidden: errorResponse('The token may not use this senderId.'),
  NotFound: errorResponse('No such batch, schedule or message for this client.'),
  TooLarge: errorResponse('The body or file is larger than the configured limit (http.maxBodyBytes, http.maxUploadBytes), or a sendbulk file holds more numbers than http.maxBulkNumbers.'),
  UnsupportedMediaType: errorResponse('UNSUPPORTED_MEDIA_TYPE: a body of a Content-Type the endpoint does not take, or of none: application/json (sendbulk: multipart/form-data).'),
  MethodNotAllowed: {
    description: 'METHOD_NOT_ALLOWED: a path of this document with a method it does not list (HEAD and OPTIONS included).',
    headers: { Allow: { required: true, schema: str, description: 'The methods the path takes, comma-separated (RFC 9110 §10.2.1).', examples: { post: { value: 'POST' } } } },
    content: json(ref('ErrorBody')),
  },
  QueueFull: {
    description: 'QUEUE_FULL: the request\'s parts would pass limits.maxQueued (all clients) or the client\'s clients[].maxQueued (the message names which; a request larger than the cap itself never fits: split it); RATE_LIMITED: more send requests than the client\'s clients[].rateLimit. Other clients are not affected by a client\'s own limits. Retry after Retry-After seconds.',
    headers: retryAfter,
    content: json(ref('ErrorBody')),
  },
  UploadRefused: {
    description: 'QUEUE_FULL and RATE_LIMITED as for sendSms; TOO_MANY_UPLOADS: http.maxConcurrentUploads uploads are in progress already, or this client has half of them (at least 1), each holding its numbers in memory until they are stored; refused before the file is read (Retry-After: 5). Retry after Retry-After seconds.',
    headers: retryAfter,
    content: json(ref('ErrorBody')),
  },
  KeyReused: errorResponse('IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request (another body, or the other send endpoint) of this client within http.idempotencyHours; nothing was done. A new request needs a new key.'),
  KeyInUse: {
    description: 'IDEMPOTENCY_KEY_IN_USE: the request with this Idempotency-Key is still running on another instance sharing the store after two minutes of waiting for it. Retry after Retry-After seconds: it is then answered that request\'s result.',
    headers: retryAfter,
    content: json(ref('ErrorBody')),
  },
  Internal: errorResponse('Unexpected; retry with backoff.'),
  RequestTimeout: errorResponse('The request did not arrive whole in time: headers within http.headersTimeoutSeconds, the body within http.requestTimeoutSeconds of them (sendbulk: http.bulkRequestTimeoutSeconds). The connection is closed.'),
  ShuttingDown: errorResponse('smppd is stopping and took no new request on this connection; retry on a new one.'),
};
const r = (name: string): Json => ({ $ref: `#/components/responses/${name}` });
const always = { 401: r('Unauthorized'), 408: r('RequestTimeout'), 500: r('Internal'), 503: r('ShuttingDown') };
/** What a route that reads a body may answer about it: fastify reads no body of a GET. */
const bodyErrors = { 413: r('TooLarge'), 415: r('UnsupportedMediaType') };
const jsonBodyErrors = { 400: r('BadRequest'), ...bodyErrors };
const ok = (description: string, schema: Json): Json => ({ 200: { description, content: json(schema) } });
const query = (name: string, description: string, schema: Json, required = true): Json => ({ name, in: 'query', required, schema, description });
const batchId = query('batch_Id', 'The batch: an id from /sms/list or a bulkSessionId.', PARAMETER_SCHEMAS.id);
/** draft-ietf-httpapi-idempotency-key-header. */
const idempotencyKey = (result: string): Json => ({
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: `Makes a retry safe: a repeat of the request (the same body) with the same key, by the same client, within http.idempotencyHours (default 24) is answered ${result}, whether the first finished, failed after it was stored, or is still running (the repeat waits for it), and nothing is stored again. The same key with another body: 422 IDEMPOTENCY_KEY_REUSED. A key is ${IDEMPOTENCY_KEY_RULE}; else 400 VALIDATION.`,
});
const keyed = { 409: r('KeyInUse'), 422: r('KeyReused') };
const batchControl = (operationId: string, summary: string, description: string, readsBody = false): Json => ({
  operationId, summary, description, parameters: [batchId],
  responses: { ...ok('The batch after the change.', ref('BatchDetail')), 400: r('BadRequest'), 404: r('NotFound'), ...(readsBody ? bodyErrors : {}), ...always },
});

const webhookRequest = (operationId: string, summary: string, schema: string): Json => ({
  post: {
    operationId,
    summary,
    description: 'POSTed to clients[].webhook.url with keep-alive. Headers: x-smppd-event-id (the outbox id), x-smppd-timestamp (unix seconds) and, with a secret, x-smppd-signature: t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>. Answer 2xx within timeoutSeconds; anything else is retried with backoff until maxAgeHours.',
    requestBody: { required: true, content: json(ref(schema)) },
    responses: { '2XX': { description: 'Acknowledged: not sent again.' }, default: { description: 'Not acknowledged: retried.' } },
  },
});

/** What smppd POSTs to a client's webhook (OpenAPI 3.1 webhooks). */
const webhooks: Json = {
  status: webhookRequest('statusEvent', 'A message\'s status changed', 'StatusEvent'),
  inbound: webhookRequest('inboundEvent', 'An inbound (MO) message arrived', 'InboundEvent'),
};

const paths: Json = {
  '/sms/sendSms': {
    post: {
      operationId: 'sendSms',
      summary: 'Send one SMS',
      description: 'Only the documented fields are accepted. Answered after the message is stored.',
      parameters: [idempotencyKey('the first one\'s message id (the body compared as JSON: field order and white space do not matter)')],
      requestBody: { required: true, content: json(ref('SendSms')) },
      responses: {
        200: { description: 'The message id.', content: { 'text/plain': { schema: { type: 'string', minLength: 1 } } } },
        ...jsonBodyErrors, 403: r('Forbidden'), ...keyed, 429: r('QueueFull'), ...always,
      },
    },
  },
  '/sms/identify': {
    post: {
      operationId: 'identify',
      summary: 'Encoding and parts of a text',
      requestBody: { required: true, content: json(ref('Identify')) },
      responses: { ...ok('The analysis.', ref('IdentifyResult')), ...jsonBodyErrors, ...always },
    },
  },
  '/sms/sendbulk': {
    post: {
      operationId: 'sendbulk',
      summary: 'Send one text to the numbers of a file',
      description: 'The whole file is read and counted before any number is stored: an upload whose parts (a long text is several per number) would pass a cap on queued parts is refused whole with 429. At most http.maxConcurrentUploads uploads are read at once, half of them of one client: past that, 429 TOO_MANY_UPLOADS before the file is read. Duplicates are removed unless allowDuplicate is true; the numbers go in the order of their first line. Exactly the two parts, in either order: another part, or one given twice, is 400 INVALID_MULTIPART.',
      parameters: [idempotencyKey('the first one\'s status and body (bulkRequest compared as JSON, the file by its bytes; the parts in either order). A repeat of an upload that stopped part way and cannot finish (its smppd stopped) is answered 500 naming its batch, which is aborted')],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: {
              type: 'object',
              properties: {
                destinationNumberFile: {
                  type: 'string', contentMediaType: 'text/csv',
                  description: 'A file named .csv or .txt (or with no extension): CSV (first column) or TXT, one number per line; a first line without digits is a header.',
                },
                bulkRequest: { ...ref('BulkRequest'), description: 'The request as JSON text: a plain form field, or a part of type application/json.' },
              },
              required: ['destinationNumberFile', 'bulkRequest'],
              additionalProperties: false,
            },
            encoding: {
              destinationNumberFile: { contentType: 'text/csv, text/plain, application/octet-stream' },
              bulkRequest: { contentType: 'text/plain, application/json' },
            },
          },
        },
      },
      responses: { ...ok('The job.', ref('BulkResponse')), ...jsonBodyErrors, 403: r('Forbidden'), ...keyed, 429: r('UploadRefused'), ...always },
    },
  },
  '/sms/list': {
    get: {
      operationId: 'listBatches',
      summary: 'All SMS jobs of the client (not paginated)',
      responses: { ...ok('Every job, in the store\'s order.', { type: 'array', items: ref('BatchListEntry') }), ...always },
    },
  },
  '/sms/edit': {
    get: {
      operationId: 'getBatch', summary: 'One job', parameters: [batchId],
      responses: { ...ok('The job.', ref('BatchDetail')), 400: r('BadRequest'), 404: r('NotFound'), ...always },
    },
  },
  '/sms/pause': { get: batchControl('pauseBatch', 'Pause a job', 'Only active batches can be paused.') },
  '/sms/resume': { get: batchControl('resumeBatch', 'Resume a paused job', 'Continues where it stopped.') },
  '/sms/abort': { delete: batchControl('abortBatch', 'Abort a job', 'Permanent: its pending messages are not sent (they become FAILED).', true) },
  '/sms/listSchedule': {
    get: {
      operationId: 'listSchedule',
      summary: 'The scheduled campaigns of the client',
      responses: { ...ok('Every schedule, with its state.', { type: 'array', items: ref('ScheduleEntry') }), ...always },
    },
  },
  '/sms/send-now': {
    post: {
      operationId: 'sendNow',
      summary: 'Release a scheduled campaign now',
      description: 'scheduleId in the query or in a JSON body; both given must agree.',
      parameters: [query('scheduleId', 'The schedule, or give it in the body.', PARAMETER_SCHEMAS.id, false)],
      requestBody: { required: false, content: json(ref('SendNow')) },
      responses: { ...ok('The schedule, released.', ref('ScheduleEntry')), ...jsonBodyErrors, 404: r('NotFound'), ...always },
    },
  },
  '/sms/abort/schedule': {
    delete: {
      operationId: 'abortSchedule',
      summary: 'Cancel a scheduled campaign',
      parameters: [query('scheduleId', 'The schedule.', PARAMETER_SCHEMAS.id)],
      responses: { ...ok('The schedule, cancelled.', ref('ScheduleEntry')), 400: r('BadRequest'), 404: r('NotFound'), ...bodyErrors, ...always },
    },
  },
  '/sms/status/{messageId}': {
    get: {
      operationId: 'getMessageStatus',
      summary: 'Delivery status of one message',
      parameters: [{ name: 'messageId', in: 'path', required: true, schema: str, description: 'The id sendSms answered.' }],
      responses: { ...ok('The message and its parts.', ref('MessageStatus')), 400: r('BadRequest'), 404: r('NotFound'), ...always },
    },
  },
  '/sms/lookup': {
    post: {
      operationId: 'lookup',
      summary: 'Number lookup (HLR/MNP): not available over SMPP',
      parameters: [query('destinationNumber', 'The number.', str, false), query('reqType', 'The lookup kind.', str, false)],
      responses: { 501: errorResponse('Always: number lookup is a service of the provider\'s REST API.'), ...bodyErrors, ...always },
    },
  },
  '/sms/resendDlr': {
    post: {
      operationId: 'resendDlr',
      summary: 'Re-push delivery statuses to the webhook',
      description: 'Queues a status event with the current status of each message of the client sent between startDate and endDate (UTC days, or instants with their zone), optionally only from senderId and only in messageStatus. The range may be at most http.maxResendDays long (default 7 days; longer: 400 VALIDATION). Needs a webhook (else NO_WEBHOOK).',
      requestBody: { required: true, content: json(ref('ResendDlr')) },
      responses: { ...ok('How many events were queued.', jsonSchema(resendDlrResultSchema, 'output')), ...jsonBodyErrors, ...always },
    },
  },
  '/events/dead': {
    get: {
      operationId: 'listDeadEvents',
      summary: 'Events that failed for maxAgeHours and were parked (smppd)',
      parameters: [query('limit', 'At most this many.', PARAMETER_SCHEMAS.limit, false), query('after', 'Only ids above this one.', PARAMETER_SCHEMAS.after, false)],
      responses: { ...ok('Oldest first.', ref('DeadEventList')), 400: r('BadRequest'), ...always },
    },
  },
  '/events/dead/resend': {
    post: {
      operationId: 'resendDeadEvents',
      summary: 'Put dead events back in the queue (smppd)',
      description: 'A dead event whose message has a later event still queued is dropped instead (superseded): sending it would move the status back.',
      requestBody: { required: true, content: json(ref('DeadResend')) },
      responses: { ...ok('What happened to them.', jsonSchema(deadResendResultSchema, 'output')), ...jsonBodyErrors, ...always },
    },
  },
  '/healthz': {
    get: { operationId: 'getLiveness', summary: 'The process is alive', security: [], responses: { ...ok('Always, while the process answers.', jsonSchema(aliveSchema, 'output')) } },
  },
  '/readyz': {
    get: {
      operationId: 'getReadiness',
      summary: 'Ready for work: the store open, at least one bind bound per upstream, not stopping',
      security: [],
      responses: {
        ...ok('Ready, and which upstreams can take a send now.', jsonSchema(readySchema, 'output')),
        503: { description: 'Not ready, and why.', content: json(jsonSchema(notReadySchema, 'output')) },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      summary: 'Prometheus metrics (on this port unless metrics.listen moves them)',
      security: [],
      responses: { 200: { description: 'The Prometheus text format.', content: { 'text/plain': { schema: str } } } },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApi',
      summary: 'This description',
      security: [],
      responses: { 200: { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) } },
    },
  },
};

/** The routes a server may leave out, and whether it serves them (default: it does, but the admin API). */
export interface DocumentedRoutes {
  /** The admin API and its status page (the config has `admin`). */
  admin?: boolean;
  /** GET /metrics on this port (not moved by metrics.listen). */
  metrics?: boolean;
  /** GET /readyz. */
  readiness?: boolean;
}

/** The whole document, describing the routes this server has. */
export function openApiDocument(o: DocumentedRoutes = {}): Json {
  const schemas = componentSchemas();
  const served = Object.fromEntries(Object.entries(paths).filter(([path]) => (path !== '/metrics' || o.metrics !== false) && (path !== '/readyz' || o.readiness !== false)));
  return {
    openapi: '3.1.0',
    info: {
      title: 'smppd local SMS API',
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'The provider\'s SMS REST API (messaging-service-api.md §4.1), served locally by smppd and delivered over SMPP. '
        + 'A path of this document asked with a method it does not list is answered 405 METHOD_NOT_ALLOWED with an Allow header '
        + '(components.responses.MethodNotAllowed); a path it does not have, 404 NOT_FOUND. '
        + 'Any request may also be refused before it reaches a route, with the same ErrorBody, and its connection closed: 400 BAD_REQUEST '
        + '(malformed HTTP, an HTTP/1.1 request without Host), 408 REQUEST_TIMEOUT, 417 EXPECTATION_FAILED (an Expect other than 100-continue), '
        + '431 HEADERS_TOO_LARGE, 503 SHUTTING_DOWN; requestUri is empty when the request\'s headers were never read whole.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: o.admin === true ? { ...served, ...adminPaths, ...adminPagePaths } : served,
    webhooks,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A token of the config\'s clients.' },
        ...(o.admin === true ? { adminBearer: adminSecurityScheme, adminSession: adminSessionScheme } : {}),
      },
      schemas: o.admin === true ? { ...schemas, ...adminSchemas } : schemas,
      responses,
    },
  };
}
