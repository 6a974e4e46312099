/**
 * The admin API in /openapi.json (when the config has `admin`): its paths, the schemas of what it
 * answers, and its security scheme `adminBearer`. Merged into the document by `openapi.ts`.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../../sms/status.js';
import { suspendSchema } from './admin-routes.js';
import { MESSAGES_LIMIT_DEFAULT, MESSAGES_LIMIT_MAX } from './admin-messages.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });
const int = { type: 'integer' } as const;
const num = { type: 'number' } as const;
const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: 'null' }] });
const object = (properties: Json, required = Object.keys(properties)): Json => ({ type: 'object', properties, required });
const status = { type: 'string', enum: DELIVERY_STATUSES } as const;

const error = (description: string): Json => ({ description, content: json(ref('ErrorBody')) });
const unauthorized: Json = {
  description: 'UNAUTHORIZED: no admin token (or signed-in session), or an unknown one. WWW-Authenticate: Bearer realm="smppd-admin".',
  headers: { 'WWW-Authenticate': { schema: str } },
  content: json(ref('ErrorBody')),
};
const forbidden = error('FORBIDDEN: a client\'s token, which is no admin\'s; or a change made with the session cookie without X-Smppd-Admin: 1 (or an Origin of this host).');
const guarded = { 401: unauthorized, 403: forbidden, 500: error('Unexpected; the smppd log has the details.') };
const security = [{ adminBearer: [] }];

const suspension = object({ since: time, by: { ...str, description: 'The admin (admin.tokens[].name).' }, reason: nullable(str) });

export const adminSchemas: Json = {
  AdminStatus: object({
    version: str,
    instanceId: { ...str, description: 'store.instanceId (PostgreSQL) or the host name.' },
    startedAt: time,
    uptimeSeconds: int,
    store: object({ kind: { type: 'string', enum: ['sqlite', 'postgres'] }, ok: bool, latencyMs: nullable(num), error: nullable(str) }),
    upstreams: { type: 'array', items: ref('AdminUpstream') },
    clients: {
      type: 'array',
      items: object({ name: str, queued: nullable(int), outbox: nullable(object({ pending: int, dead: int })) }),
      description: 'queued and outbox are null when the store could not be read.',
    },
  }),
  AdminUpstream: object({
    name: str,
    available: { ...bool, description: 'Routing\'s view: a bind bound and not suspended.' },
    suspended: nullable(suspension),
    queued: { ...nullable(int), description: 'Parts queued for it (not inflight); null when the store could not be read.' },
    binds: { type: 'array', items: ref('AdminBind') },
  }),
  AdminBind: object({
    id: { ...str, description: 'upstream#index.' },
    state: { type: 'string', enum: ['connecting', 'bound', 'backoff', 'stopping', 'stopped', 'failed'] },
    detail: { ...str, description: 'Why it is in its state (the last error, the stop\'s reason); empty when none.' },
    backoffSecondsLeft: nullable(num),
    boundSince: nullable(time),
    submitRate: object({ last10s: num, last1m: num }),
    window: object({ size: int, inUse: { ...int, description: 'Outstanding plus held (answered, not stored yet).' }, held: int }),
    throttle: object({
      rate: { ...num, description: 'The pacing rate in force, submit_sm/s; 0 = unpaced.' },
      learnedLimit: { ...nullable(num), description: 'The rate the SMSC was last measured to accept, submit_sm/s; null before a throttle.' },
      episodes: int, throttledSubmits: int, throttled: bool,
    }),
  }),
  AdminSuspension: object({ upstream: str, suspended: nullable(suspension) }),
  SuspendRequest: (() => {
    const { $schema: _drop, ...rest } = z.toJSONSchema(suspendSchema, { io: 'input' }) as Json;
    return rest;
  })(),
  AdminMessageList: object({
    messages: {
      type: 'array',
      items: object({
        id: str, client: str, upstream: str, sender: str, destination: str, status, reason: nullable(str), parts: int, acceptedAt: time, updatedAt: time,
      }),
    },
    next: { ...nullable(str), description: 'Pass as after for the next page; null: no more. A page may hold fewer than limit and still have a next.' },
  }),
  AdminMessageStory: object({
    message: object({
      id: str, client: str, upstream: str, route: nullable(str), batchId: nullable(int), sender: str, destination: str, text: str, encoding: str,
      status, reason: nullable(str), acceptedAt: time, updatedAt: time,
    }),
    parts: {
      type: 'array',
      items: object({
        part: int, state: { type: 'string', enum: ['queued', 'inflight', 'done'] }, status, reason: nullable(str), smscId: nullable(str), bind: nullable(str),
        attempts: int, sentAt: nullable(time), updatedAt: time,
      }),
    },
    history: {
      type: 'array',
      items: object({ at: time, part: nullable(int), status: nullable(str), reason: nullable(str), source: { type: 'string', enum: ['accept', 'submit', 'receipt', 'local'] } }),
    },
    events: {
      type: 'array',
      description: 'The message\'s events, oldest first: waiting in the outbox (pending, blocked), dead, or delivered.',
      items: object({
        id: int, kind: str, status: nullable(str), state: { type: 'string', enum: ['pending', 'blocked', 'dead', 'delivered'] },
        attempts: { ...int, description: 'Sends made so far; a delivered event\'s count the one delivered.' },
        createdAt: time, nextAttemptAt: { ...nullable(time), description: 'When it is due next; null once delivered.' },
        deliveredAt: { ...nullable(time), description: 'When its receiver took it; null until delivered.' },
        lastError: { ...nullable(str), description: 'The error of its last failed send; null when none failed.' },
      }),
    },
  }),
};

const query = (name: string, description: string, schema: Json = str): Json => ({ name, in: 'query', required: false, schema, description });
const upstreamName = { name: 'name', in: 'path', required: true, schema: str, description: 'The upstream (upstreams[].name).' };

export const adminPaths: Json = {
  '/admin/status': {
    get: {
      operationId: 'getAdminStatus',
      summary: 'Upstreams, binds, queues, outboxes, store health, version and uptime (admin)',
      security,
      responses: { 200: { description: 'Now.', content: json(ref('AdminStatus')) }, ...guarded },
    },
  },
  '/admin/upstreams/{name}/suspend': {
    post: {
      operationId: 'suspendUpstream',
      summary: 'Suspend an upstream: no new sends to it (its routes fail over), outstanding ones finish, binds stay up (admin)',
      description: 'Kept across restarts and applied on every instance sharing the store. Idempotent: an upstream suspended already keeps its suspension.',
      security,
      parameters: [upstreamName],
      requestBody: { required: false, content: json(ref('SuspendRequest')) },
      responses: {
        200: { description: 'Suspended.', content: json(ref('AdminSuspension')) }, 400: error('VALIDATION or INVALID_JSON.'),
        404: error('UNKNOWN_UPSTREAM.'), 415: error('UNSUPPORTED_MEDIA_TYPE: a body that is not application/json.'), ...guarded,
      },
    },
  },
  '/admin/upstreams/{name}/resume': {
    post: {
      operationId: 'resumeUpstream',
      summary: 'Resume a suspended upstream (admin)',
      description: 'Idempotent.',
      security,
      parameters: [upstreamName],
      responses: {
        200: { description: 'Resumed.', content: json(ref('AdminSuspension')) }, 404: error('UNKNOWN_UPSTREAM.'),
        415: error('UNSUPPORTED_MEDIA_TYPE: a body that is not application/json.'), ...guarded,
      },
    },
  },
  '/admin/messages': {
    get: {
      operationId: 'searchMessages',
      summary: 'Find messages across clients, newest first (admin)',
      security,
      parameters: [
        query('destination', 'Digits, with an optional leading +.'), query('client', 'A client\'s name.'),
        query('since', 'Accepted at or after (ISO 8601).', time), query('until', 'Accepted before (ISO 8601).', time),
        query('status', 'The message\'s status.', status),
        query('limit', `At most this many (default ${MESSAGES_LIMIT_DEFAULT}).`, { ...int, minimum: 1, maximum: MESSAGES_LIMIT_MAX }),
        query('after', 'The next of the previous page.'),
      ],
      responses: { 200: { description: 'A page.', content: json(ref('AdminMessageList')) }, 400: error('VALIDATION: a parameter, named.'), ...guarded },
    },
  },
  '/admin/messages/{id}': {
    get: {
      operationId: 'getMessageStory',
      summary: 'The whole story of one message: parts, SMSC ids, every status change, its events (admin)',
      security,
      parameters: [{ name: 'id', in: 'path', required: true, schema: str, description: 'The message id.' }],
      responses: { 200: { description: 'The message.', content: json(ref('AdminMessageStory')) }, 404: error('MESSAGE_NOT_FOUND.'), ...guarded },
    },
  },
};

export const adminSecurityScheme: Json = {
  type: 'http', scheme: 'bearer',
  description: 'A token of the config\'s admin.tokens (not a client\'s: that is 403). The status page signs in with the smppd_admin session cookie instead.',
};
