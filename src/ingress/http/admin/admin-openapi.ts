/**
 * The admin API in /openapi.json (when the config has `admin`): its paths, the schemas of what it
 * answers, and its security scheme `adminBearer`. Merged into the document by `openapi.ts`.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../../sms/status.js';
import { ADMIN_CHALLENGE } from './admin-auth.js';
import { adminResponseSchemas } from './admin-responses.js';
import { suspendSchema } from './admin-routes.js';
import { MESSAGES_LIMIT_DEFAULT, MESSAGES_LIMIT_MAX } from './admin-messages.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });
const int = { type: 'integer' } as const;
const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const status = { type: 'string', enum: DELIVERY_STATUSES } as const;

const error = (description: string): Json => ({ description, content: json(ref('ErrorBody')) });
const unauthorized: Json = {
  description: 'UNAUTHORIZED: no admin token (or signed-in session), or an unknown one. WWW-Authenticate: Bearer realm="smppd-admin".',
  headers: { 'WWW-Authenticate': { required: true, schema: { type: 'string', const: ADMIN_CHALLENGE } } },
  content: json(ref('ErrorBody')),
};
const forbidden = error('FORBIDDEN: a client\'s token, which is no admin\'s; or a change made with the session cookie without X-Smppd-Admin: 1 (or an Origin of this host).');
const guarded = { 401: unauthorized, 403: forbidden, 500: error('Unexpected; the smppd log has the details.') };
const security = [{ adminBearer: [] }];

/** The admin replies generated from their zod schemas (admin-responses.ts), and the suspend request's. */
export const adminSchemas: Json = {
  ...(() => {
    const generated = z.toJSONSchema(adminResponseSchemas, { io: 'output', uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, Json> };
    return Object.fromEntries(Object.entries(generated.schemas).map(([name, { $schema: _schema, $id: _id, ...schema }]) => [name, schema]));
  })(),
  SuspendRequest: (() => {
    const { $schema: _drop, ...rest } = z.toJSONSchema(suspendSchema, { io: 'input' }) as Json;
    return rest;
  })(),
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
