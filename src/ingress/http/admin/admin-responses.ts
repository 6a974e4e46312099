/**
 * What the admin API answers, as zod schemas: the routes are typed by them (`z.output`) and
 * /openapi.json's admin schemas are generated from them (admin-openapi.ts), as the client API's
 * are from api/responses.ts. Times are ISO 8601 UTC with the Z.
 */
import { z } from 'zod';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../sms/status.js';
import type { Same } from '../../../api/responses.js';
import type { AdminStatus } from '../../../dispatch/admin-status.js';
import type { HistoryEntry } from './message-history.js';

/** Every schema with an `id` here is a named component of /openapi.json (with the admin API). */
export const adminResponseSchemas = z.registry<{ id: string }>();
function named<S extends z.ZodType>(id: string, schema: S): S {
  adminResponseSchemas.add(schema, { id });
  return schema;
}

const time = () => z.iso.datetime();
const count = () => z.int().min(0);
const status = z.enum(DELIVERY_STATUSES as readonly [DeliveryStatus, ...DeliveryStatus[]]);
const described = <S extends z.ZodType>(schema: S, description: string): S => schema.meta({ description });

const suspension = z.object({
  since: time(),
  by: described(z.string(), 'The admin (admin.tokens[].name).'),
  reason: z.string().nullable(),
});

export const adminBindSchema = named('AdminBind', z.object({
  id: described(z.string(), 'upstream#index.'),
  state: z.enum(['connecting', 'bound', 'backoff', 'stopping', 'stopped', 'failed']),
  detail: described(z.string(), 'Why it is in its state (the last error, the stop\'s reason); empty when none.'),
  backoffSecondsLeft: z.number().min(0).nullable(),
  boundSince: time().nullable(),
  submitRate: z.object({ last10s: z.number().min(0), last1m: z.number().min(0) }),
  window: z.object({ size: count(), inUse: described(count(), 'Outstanding plus held (answered, not stored yet).'), held: count() }),
  throttle: z.object({
    rate: described(z.number().min(0), 'The pacing rate in force, submit_sm/s; 0 = unpaced.'),
    learnedLimit: described(z.number().min(0).nullable(), 'The rate the SMSC was last measured to accept, submit_sm/s; null before a throttle.'),
    episodes: count(),
    throttledSubmits: count(),
    throttled: z.boolean(),
  }),
}));

export const adminUpstreamSchema = named('AdminUpstream', z.object({
  name: z.string(),
  available: described(z.boolean(), 'Routing\'s view: a bind bound and not suspended.'),
  suspended: suspension.nullable(),
  queued: described(count().nullable(), 'Parts queued for it (not inflight); null when the store could not be read.'),
  binds: z.array(adminBindSchema),
}));

/** GET /admin/status. */
export const adminStatusSchema = named('AdminStatus', z.object({
  version: z.string(),
  instanceId: described(z.string(), 'store.instanceId (PostgreSQL) or the host name.'),
  startedAt: time(),
  uptimeSeconds: count(),
  store: z.object({ kind: z.enum(['sqlite', 'postgres']), ok: z.boolean(), latencyMs: z.number().min(0).nullable(), error: z.string().nullable() }),
  upstreams: z.array(adminUpstreamSchema),
  clients: described(z.array(z.object({ name: z.string(), queued: count().nullable(), outbox: z.object({ pending: count(), dead: count() }).nullable() })),
    'queued and outbox are null when the store could not be read.'),
}));

/** POST /admin/upstreams/{name}/suspend and /resume. */
export const adminSuspensionSchema = named('AdminSuspension', z.object({ upstream: z.string(), suspended: suspension.nullable() }));

/** GET /admin/messages. */
export const adminMessageListSchema = named('AdminMessageList', z.object({
  messages: z.array(z.object({
    id: z.string(), client: z.string(), upstream: z.string(), sender: z.string(), destination: z.string(), status, reason: z.string().nullable(),
    parts: z.int().min(1), acceptedAt: time(), updatedAt: time(),
  })),
  next: described(z.string().regex(/^[1-9]\d*$/).nullable(), 'Pass as after for the next page; null: no more. A page may hold fewer than limit and still have a next.'),
}));

/** GET /admin/messages/{id}. */
export const adminMessageStorySchema = named('AdminMessageStory', z.object({
  message: z.object({
    id: z.string(), client: z.string(), upstream: z.string(), route: z.string().nullable(), batchId: z.int().min(1).nullable(), sender: z.string(),
    destination: z.string(), text: z.string(), encoding: z.string(), status, reason: z.string().nullable(), acceptedAt: time(), updatedAt: time(),
  }),
  parts: z.array(z.object({
    part: z.int().min(1),
    state: described(z.string(), 'queued, inflight or done.'),
    status, reason: z.string().nullable(), smscId: z.string().nullable(),
    bind: described(z.string().nullable(), 'The bind that sent it (upstream#index); null until sent.'),
    attempts: count(), sentAt: time().nullable(), updatedAt: time(),
  })),
  history: z.array(z.object({
    at: time(), part: z.int().min(1).nullable(), status: z.string().nullable(), reason: z.string().nullable(), source: z.enum(['accept', 'submit', 'receipt', 'local']),
  })),
  events: described(z.array(z.object({
    id: z.int().min(1), kind: z.string(), status: z.string().nullable(), state: z.enum(['pending', 'blocked', 'dead', 'delivered']),
    attempts: described(count(), 'Sends made so far; a delivered event\'s count the one delivered.'),
    createdAt: time(),
    nextAttemptAt: described(time().nullable(), 'When it is due next; null once delivered.'),
    deliveredAt: described(time().nullable(), 'When its receiver took it; null until delivered.'),
    lastError: described(z.string().nullable(), 'The error of its last failed send; null when none failed.'),
  })), 'The message\'s events, oldest first: waiting in the outbox (pending, blocked), dead, or delivered.'),
}));

const agree: [Same<z.output<typeof adminStatusSchema>, AdminStatus>, Same<z.output<typeof adminMessageStorySchema>['history'][number], HistoryEntry>] = [true, true];
void agree;
