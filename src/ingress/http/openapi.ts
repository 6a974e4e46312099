/**
 * The OpenAPI 3.1 description of the local API, served at GET /openapi.json. Request bodies come
 * from the same zod schemas that validate them, and the errorCode enum from API_ERRORS; a test
 * checks that every registered route is described and every described route is registered.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../sms/status.js';
import { DECODE_PROBLEMS } from '../../sms/text-codec.js';
import { API_ERRORS } from '../../api/errors.js';
import { NUMBER_PROBLEMS } from '../../api/numbers.js';
import { IDEMPOTENCY_KEY_RULE } from '../../api/idempotency-key.js';
import { bulkRequestSchema, deadResendSchema, identifySchema, resendDlrSchema, sendNowSchema, sendSmsSchema } from '../../api/validation.js';
import { adminPaths, adminSchemas, adminSecurityScheme } from './admin/admin-openapi.js';
import { adminPagePaths, adminSessionScheme } from './admin-ui/page-openapi.js';

type Json = Record<string, unknown>;

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses) of a request schema, without its $schema line. */
function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });
const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;
const nullable = (type: string): Json => ({ type: [type, 'null'] });
const object = (properties: Json, required = Object.keys(properties)): Json => ({ type: 'object', properties, required });

const schemas: Json = {
  ErrorBody: {
    ...object({
      status: { ...int, description: 'The HTTP status.' },
      error: { ...str, description: 'The reason phrase.' },
      message: { ...str, description: 'For people: log it, do not parse it.' },
      errorCode: { type: 'string', enum: Object.keys(API_ERRORS), description: 'Stable: branch on it after the status.' },
      requestUri: { ...str, description: 'The path of the failing request.' },
    }),
    description: 'Every refusal but the client API\'s 401 (messaging-service-api.md §7); the admin API\'s 401 too.',
  },
  UnauthorizedBody: { ...object({ error: str, message: str }), description: 'A missing or invalid bearer token (§5, §7).' },
  SendSms: jsonSchema(sendSmsSchema),
  BulkRequest: jsonSchema(bulkRequestSchema),
  Identify: jsonSchema(identifySchema),
  SendNow: jsonSchema(sendNowSchema),
  IdentifyResult: object({
    message: str,
    messageType: { type: 'string', enum: ['GSM-7', 'UNICODE'] },
    smscount: { ...int, description: 'Parts the text makes; smsParts in a send.' },
    charCount: int,
    charLimit: { ...int, enum: [160, 153, 70, 67] },
  }),
  BulkResponse: object({
    status: { type: 'string', enum: ['success'] },
    bulkSessionId: { ...str, description: 'The batch id (batch_Id of the control calls).' },
    credits: { ...str, description: 'The parts the batch will cost: each valid number\'s segments (by its route), summed. smppd keeps no balance.' },
    deductcredits: { ...str, description: 'The same as credits: what the batch costs, in parts.' },
    bulkListInfo: object({
      total: { ...int, description: 'Number lines read: validCount + invalidCount + duplicate.' },
      validCount: int,
      invalidCount: int,
      duplicate: { ...int, description: 'Repeats removed (allowDuplicate false).' },
      errors: { type: 'object', properties: Object.fromEntries(Object.keys(NUMBER_PROBLEMS).map((k) => [k, int])), additionalProperties: false,
        description: 'Invalid lines by reason; only reasons that occurred.' },
    }),
  }),
  BatchListEntry: object({
    id: { ...int, description: 'Pass as batch_Id.' },
    senderId: str,
    reqType: { type: 'string', enum: ['single', 'bulk'] },
    messageType: { type: 'string', enum: ['GSM-7', 'UNICODE'] },
    campaignName: str,
    total: int,
    processed: int,
    pending: int,
    active: { type: 'boolean' },
    createdOn: { ...str, description: 'ISO 8601 date-time without zone, in UTC.', examples: ['2026-01-01T10:00:00'] },
  }),
  BatchDetail: {
    allOf: [ref('BatchListEntry'), object({ state: { type: 'string', enum: ['active', 'paused', 'aborted'] }, scheduleId: nullable('integer') })],
  },
  ScheduleEntry: object({
    id: { ...int, description: 'Pass as scheduleId.' },
    batchId: int,
    state: { type: 'string', enum: ['scheduled', 'released', 'cancelled'] },
    time: { ...str, format: 'date-time', description: 'When it releases its messages (UTC): a recurring schedule\'s next run.' },
    repeat: { type: ['object', 'null'], properties: { every: { type: 'string', enum: ['DAILY', 'WEEKLY', 'MONTHLY'] }, count: nullable('integer'),
      until: { type: ['string', 'null'], format: 'date-time' }, gmt: str }, required: ['every', 'count', 'until', 'gmt'], description: 'The series; null for one run.' },
    runs: { ...int, description: 'Runs released so far.' },
    lastRun: { type: ['string', 'null'], format: 'date-time', description: 'When the last run was released.' },
    senderId: nullable('string'),
    campaignName: nullable('string'),
    total: nullable('integer'),
    createdAt: { ...str, format: 'date-time' },
  }),
  ResendDlr: jsonSchema(resendDlrSchema),
  DeadResend: jsonSchema(deadResendSchema),
  StatusEvent: {
    ...object({
      type: { type: 'string', enum: ['status'] },
      messageId: { ...str, description: 'The id sendSms answered (or one message of a sendbulk). Deduplicate by messageId and status.' },
      channel: { type: 'string', enum: ['sms'] },
      destination: str,
      status: { type: 'string', enum: DELIVERY_STATUSES, description: 'The message\'s status after the change. New values may appear.' },
      timestamp: { ...str, format: 'date-time', description: 'When the change happened (UTC).' },
      reason: { ...nullable('string'), description: 'Why a message FAILED or was REJECTED (ESME_R name and code, or receipt stat and err).' },
      batchId: nullable('integer'),
      part: {
        type: ['object', 'null'], properties: { part: int, status: { type: 'string', enum: DELIVERY_STATUSES }, smscMessageId: nullable('string') },
        description: 'The part whose change moved the message; null for SUBMITTED.',
      },
      parts: { ...int, description: 'How many parts the message has.' },
      smscMessageId: { ...nullable('string'), description: 'The SMSC\'s id of that part.' },
      receipt: { type: ['object', 'null'], description: 'The delivery receipt that caused the change, as read (raw text and fields); null otherwise.' },
      resent: { type: 'boolean', enum: [true], description: 'Present on a re-push by POST /sms/resendDlr.' },
    }, ['type', 'messageId', 'channel', 'destination', 'status', 'timestamp', 'reason', 'batchId', 'part', 'parts', 'smscMessageId', 'receipt']),
    description: 'One change of a message\'s status. A message\'s events arrive in order, one at a time; a status never arrives after a later one.',
  },
  InboundEvent: {
    ...object({
      type: { type: 'string', enum: ['inbound'] },
      channel: { type: 'string', enum: ['sms'] },
      inboundId: { ...int, description: 'smppd\'s id of the stored message: deduplicate by it.' },
      source: { ...str, description: 'The sender\'s number.' },
      destination: { ...str, description: 'Your number or short code it was sent to.' },
      text: { ...str, description: 'Decoded by dataCoding (binary data: lowercase hex). A best effort when malformed.' },
      receivedAt: { ...str, format: 'date-time', description: 'When its last part came (UTC).' },
      parts: { ...int, description: 'Parts it arrived in.' },
      missingParts: {
        type: 'array', items: int,
        description: 'Sequence numbers of parts that never came: it was stored after waiting 10 minutes for them. Empty when whole.',
      },
      dataCoding: { ...int, description: 'SMPP data_coding of its (first) part.' },
      malformed: { type: 'boolean', description: 'True when its bytes could not be decoded cleanly: problems says how, userData has the bytes.' },
      problems: {
        type: 'array', items: { type: 'string', enum: [...DECODE_PROBLEMS] },
        description: 'UDH_INVALID: the UDH its esm_class announced runs past the data (the whole user data was read as text); '
          + 'UCS2_ODD_LENGTH; UCS2_UNPAIRED_SURROGATE; INVALID_BYTES: an octet its alphabet does not have, or a NUL (U+FFFD in text). Empty unless malformed. New values may appear.',
      },
      userData: {
        ...nullable('string'),
        description: 'With malformed: the user data as it came (UDHs removed where they could be read), parts in order, lowercase hex; else null.',
      },
    }),
    description: 'An inbound (MO) message, reassembled when it came in parts.',
  },
  DeadEventList: object({
    events: {
      type: 'array',
      items: object({
        id: { ...int, description: 'Pass to POST /events/dead/resend.' },
        kind: { type: 'string', enum: ['status', 'inbound'] },
        messageId: nullable('string'),
        createdAt: { ...str, format: 'date-time' },
        diedAt: { ...str, format: 'date-time' },
        attempts: int,
        lastError: nullable('string'),
        event: { oneOf: [ref('StatusEvent'), ref('InboundEvent')] },
      }),
    },
    next: { ...nullable('integer'), description: 'Pass as after= for the next page; null on the last.' },
  }),
  MessageStatus: object({
    messageId: str,
    status: { type: 'string', enum: DELIVERY_STATUSES, description: 'New values may appear: do not fail on one you do not know.' },
    reason: nullable('string'),
    createdAt: { ...str, format: 'date-time' },
    updatedAt: { ...str, format: 'date-time' },
    batchId: nullable('integer'),
    destination: str,
    parts: { type: 'array', items: object({ part: int, status: { type: 'string', enum: DELIVERY_STATUSES }, smscMessageId: nullable('string') }) },
  }),
};

const errorResponse = (description: string): Json => ({ description, content: json(ref('ErrorBody')) });
const responses: Json = {
  BadRequest: errorResponse('Validation error, bad JSON or bad multipart (errorCode says which).'),
  Unauthorized: { description: 'Missing or invalid bearer token.', content: json(ref('UnauthorizedBody')) },
  Forbidden: errorResponse('The token may not use this senderId.'),
  NotFound: errorResponse('No such batch, schedule or message for this client.'),
  TooLarge: errorResponse('The body or file is larger than the configured limit (http.maxBodyBytes, http.maxUploadBytes), or a sendbulk file holds more numbers than http.maxBulkNumbers.'),
  UnsupportedMediaType: errorResponse('A Content-Type the endpoint does not take.'),
  QueueFull: {
    description: 'QUEUE_FULL: the request\'s parts would pass limits.maxQueued (all clients) or the client\'s clients[].maxQueued (the message names which; a request larger than the cap itself never fits: split it); RATE_LIMITED: more send requests than the client\'s clients[].rateLimit. Other clients are not affected by a client\'s own limits. Retry after Retry-After seconds.',
    headers: { 'Retry-After': { schema: int, description: 'Seconds.' } },
    content: json(ref('ErrorBody')),
  },
  UploadRefused: {
    description: 'QUEUE_FULL and RATE_LIMITED as for sendSms; TOO_MANY_UPLOADS: http.maxConcurrentUploads uploads are in progress already, or this client has half of them (at least 1), each holding its numbers in memory until they are stored; refused before the file is read (Retry-After: 5). Retry after Retry-After seconds.',
    headers: { 'Retry-After': { schema: int, description: 'Seconds.' } },
    content: json(ref('ErrorBody')),
  },
  KeyReused: errorResponse('IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another request (another body, or the other send endpoint) of this client within http.idempotencyHours; nothing was done. A new request needs a new key.'),
  KeyInUse: {
    description: 'IDEMPOTENCY_KEY_IN_USE: the request with this Idempotency-Key is still running on another instance sharing the store after two minutes of waiting for it. Retry after Retry-After seconds: it is then answered that request\'s result.',
    headers: { 'Retry-After': { schema: int, description: 'Seconds.' } },
    content: json(ref('ErrorBody')),
  },
  Internal: errorResponse('Unexpected; retry with backoff.'),
  RequestTimeout: errorResponse('The request did not arrive whole in time: headers within http.headersTimeoutSeconds, the body within http.requestTimeoutSeconds of them (sendbulk: http.bulkRequestTimeoutSeconds). The connection is closed.'),
  ShuttingDown: errorResponse('smppd is stopping and took no new request on this connection; retry on a new one.'),
};
const r = (name: string): Json => ({ $ref: `#/components/responses/${name}` });
const always = { 401: r('Unauthorized'), 408: r('RequestTimeout'), 500: r('Internal'), 503: r('ShuttingDown') };
const jsonBodyErrors = { 400: r('BadRequest'), 413: r('TooLarge'), 415: r('UnsupportedMediaType') };
const ok = (description: string, schema: Json): Json => ({ 200: { description, content: json(schema) } });
const query = (name: string, description: string, required = true): Json => ({ name, in: 'query', required, schema: required ? int : str, description });
const batchId = query('batch_Id', 'The batch: an id from /sms/list or a bulkSessionId.');
/** draft-ietf-httpapi-idempotency-key-header. */
const idempotencyKey = (result: string): Json => ({
  name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: `Makes a retry safe: a repeat of the request (the same body) with the same key, by the same client, within http.idempotencyHours (default 24) is answered ${result}, whether the first finished, failed after it was stored, or is still running (the repeat waits for it), and nothing is stored again. The same key with another body: 422 IDEMPOTENCY_KEY_REUSED. A key is ${IDEMPOTENCY_KEY_RULE}; else 400 VALIDATION.`,
});
const keyed = { 409: r('KeyInUse'), 422: r('KeyReused') };
const batchControl = (summary: string, description: string): Json => ({
  summary, description, parameters: [batchId],
  responses: { ...ok('The batch after the change.', ref('BatchDetail')), 400: r('BadRequest'), 404: r('NotFound'), ...always },
});

const webhookRequest = (summary: string, schema: string): Json => ({
  post: {
    summary,
    description: 'POSTed to clients[].webhook.url with keep-alive. Headers: x-smppd-event-id (the outbox id), x-smppd-timestamp (unix seconds) and, with a secret, x-smppd-signature: t=<timestamp>,v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>. Answer 2xx within timeoutSeconds; anything else is retried with backoff until maxAgeHours.',
    requestBody: { required: true, content: json(ref(schema)) },
    responses: { '2XX': { description: 'Acknowledged: not sent again.' }, default: { description: 'Not acknowledged: retried.' } },
  },
});

/** What smppd POSTs to a client's webhook (OpenAPI 3.1 webhooks). */
const webhooks: Json = {
  status: webhookRequest('A message\'s status changed', 'StatusEvent'),
  inbound: webhookRequest('An inbound (MO) message arrived', 'InboundEvent'),
};

const paths: Json = {
  '/sms/sendSms': {
    post: {
      summary: 'Send one SMS',
      description: 'Only the documented fields are accepted. Answered after the message is stored.',
      parameters: [idempotencyKey('the first one\'s message id (the body compared as JSON: field order and white space do not matter)')],
      requestBody: { required: true, content: json(ref('SendSms')) },
      responses: {
        200: { description: 'The message id.', content: { 'text/plain': { schema: str } } },
        ...jsonBodyErrors, 403: r('Forbidden'), ...keyed, 429: r('QueueFull'), ...always,
      },
    },
  },
  '/sms/identify': {
    post: {
      summary: 'Encoding and parts of a text',
      requestBody: { required: true, content: json(ref('Identify')) },
      responses: { ...ok('The analysis.', ref('IdentifyResult')), ...jsonBodyErrors, ...always },
    },
  },
  '/sms/sendbulk': {
    post: {
      summary: 'Send one text to the numbers of a file',
      description: 'The whole file is read and counted before any number is stored: an upload whose parts (a long text is several per number) would pass a cap on queued parts is refused whole with 429. At most http.maxConcurrentUploads uploads are read at once, half of them of one client: past that, 429 TOO_MANY_UPLOADS before the file is read. Duplicates are removed unless allowDuplicate is true; the numbers go in the order of their first line.',
      parameters: [idempotencyKey('the first one\'s status and body (bulkRequest compared as JSON, the file by its bytes; the parts in either order). A repeat of an upload that stopped part way and cannot finish (its smppd stopped) is answered 500 naming its batch, which is aborted')],
      requestBody: {
        required: true,
        content: {
          'multipart/form-data': {
            schema: object({
              destinationNumberFile: { type: 'string', contentMediaType: 'text/csv', description: 'CSV (first column) or TXT, one number per line; a first line without digits is a header.' },
              bulkRequest: { type: 'string', contentMediaType: 'application/json', contentSchema: ref('BulkRequest') },
            }),
          },
        },
      },
      responses: { ...ok('The job.', ref('BulkResponse')), ...jsonBodyErrors, 403: r('Forbidden'), ...keyed, 429: r('UploadRefused'), ...always },
    },
  },
  '/sms/list': { get: { summary: 'All SMS jobs of the client (not paginated)', responses: { ...ok('Every job, in the store\'s order.', { type: 'array', items: ref('BatchListEntry') }), ...always } } },
  '/sms/edit': { get: { summary: 'One job', parameters: [batchId], responses: { ...ok('The job.', ref('BatchDetail')), 400: r('BadRequest'), 404: r('NotFound'), ...always } } },
  '/sms/pause': { get: batchControl('Pause a job', 'Only active batches can be paused.') },
  '/sms/resume': { get: batchControl('Resume a paused job', 'Continues where it stopped.') },
  '/sms/abort': { delete: batchControl('Abort a job', 'Permanent: its pending messages are not sent (they become FAILED).') },
  '/sms/listSchedule': {
    get: { summary: 'The scheduled campaigns of the client', responses: { ...ok('Every schedule, with its state.', { type: 'array', items: ref('ScheduleEntry') }), ...always } },
  },
  '/sms/send-now': {
    post: {
      summary: 'Release a scheduled campaign now',
      description: 'scheduleId in the query or in a JSON body.',
      parameters: [query('scheduleId', 'The schedule, or give it in the body.', false)],
      requestBody: { required: false, content: json(ref('SendNow')) },
      responses: { ...ok('The schedule, released.', ref('ScheduleEntry')), ...jsonBodyErrors, 404: r('NotFound'), ...always },
    },
  },
  '/sms/abort/schedule': {
    delete: {
      summary: 'Cancel a scheduled campaign',
      parameters: [query('scheduleId', 'The schedule.')],
      responses: { ...ok('The schedule, cancelled.', ref('ScheduleEntry')), 400: r('BadRequest'), 404: r('NotFound'), ...always },
    },
  },
  '/sms/status/{messageId}': {
    get: {
      summary: 'Delivery status of one message',
      parameters: [{ name: 'messageId', in: 'path', required: true, schema: str, description: 'The id sendSms answered.' }],
      responses: { ...ok('The message and its parts.', ref('MessageStatus')), 404: r('NotFound'), ...always },
    },
  },
  '/sms/lookup': {
    post: {
      summary: 'Number lookup (HLR/MNP): not available over SMPP',
      parameters: [query('destinationNumber', 'The number.', false), query('reqType', 'The lookup kind.', false)],
      responses: { 501: errorResponse('Always: number lookup is a service of the provider\'s REST API.'), ...always },
    },
  },
  '/sms/resendDlr': {
    post: {
      summary: 'Re-push delivery statuses to the webhook',
      description: 'Queues a status event with the current status of each message of the client sent between startDate and endDate (UTC days, or instants with their zone), optionally only from senderId and only in messageStatus. The range may be at most http.maxResendDays long (default 7 days; longer: 400 VALIDATION). Needs a webhook (else NO_WEBHOOK).',
      requestBody: { required: true, content: json(ref('ResendDlr')) },
      responses: { ...ok('How many events were queued.', object({ queued: int })), ...jsonBodyErrors, ...always },
    },
  },
  '/events/dead': {
    get: {
      summary: 'Events that failed for maxAgeHours and were parked (smppd)',
      parameters: [query('limit', 'At most this many (default 100, at most 1000).', false), query('after', 'Only ids above this one (the next of the previous page).', false)],
      responses: { ...ok('Oldest first.', ref('DeadEventList')), 400: r('BadRequest'), ...always },
    },
  },
  '/events/dead/resend': {
    post: {
      summary: 'Put dead events back in the queue (smppd)',
      description: 'A dead event whose message has a later event still queued is dropped instead (superseded): sending it would move the status back.',
      requestBody: { required: true, content: json(ref('DeadResend')) },
      responses: { ...ok('What happened to them.', object({ requeued: int, superseded: int })), ...jsonBodyErrors, ...always },
    },
  },
  '/healthz': {
    get: { summary: 'The process is alive', security: [], responses: { ...ok('Always, while the process answers.', object({ status: { type: 'string', enum: ['ok'] } })) } },
  },
  '/readyz': {
    get: {
      summary: 'Ready for work: the store open, at least one bind bound per upstream, not stopping',
      security: [],
      responses: {
        ...ok('Ready.', object({ status: { type: 'string', enum: ['ready'] } })),
        503: { description: 'Not ready, and why.', content: json(object({ status: { type: 'string', enum: ['not ready'] }, reasons: { type: 'array', items: str } })) },
      },
    },
  },
  '/metrics': {
    get: {
      summary: 'Prometheus metrics (on this port unless metrics.listen moves them)',
      security: [],
      responses: { 200: { description: 'The Prometheus text format.', content: { 'text/plain': { schema: str } } } },
    },
  },
  '/openapi.json': {
    get: {
      summary: 'This description',
      security: [],
      responses: { 200: { description: 'OpenAPI 3.1.', content: json({ type: 'object' }) } },
    },
  },
};

/** The whole document; `admin`: with the admin API (the config has `admin`). */
export function openApiDocument(o: { admin?: boolean } = {}): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'smppd local SMS API',
      version: '1.0.0',
      description: 'The provider\'s SMS REST API (messaging-service-api.md §4.1), served locally by smppd and delivered over SMPP. '
        + 'Any request may also be refused before it reaches a route, with the same ErrorBody, and its connection closed: 400 BAD_REQUEST '
        + '(malformed HTTP, an HTTP/1.1 request without Host), 408 REQUEST_TIMEOUT, 417 EXPECTATION_FAILED (an Expect other than 100-continue), '
        + '431 HEADERS_TOO_LARGE, 503 SHUTTING_DOWN; requestUri is empty when the request\'s headers were never read whole.',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: o.admin === true ? { ...paths, ...adminPaths, ...adminPagePaths } : paths,
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
