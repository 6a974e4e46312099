/**
 * GET /admin/messages (search across clients, newest first, a page at a time) and
 * GET /admin/messages/{id} (one message's whole story: parts, SMSC ids, history, events and their deliveries).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../api/errors.js';
import { parseInput } from '../../../api/validation.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../../sms/status.js';
import type { MessageQuery, MessageStory } from '../../../store/message-search.js';
import type { AdminHttpDeps } from './admin-context.js';
import type { adminMessageListSchema, adminMessageStorySchema } from './admin-responses.js';
import { messageHistory } from './message-history.js';

export const MESSAGES_LIMIT_DEFAULT = 50;
export const MESSAGES_LIMIT_MAX = 500;

/** An ISO 8601 date-time with its zone (`2026-01-01T10:00:00Z`, `…+02:00`), or a day (`2026-01-01`, UTC midnight). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;
const time = z.string().regex(ISO_TIME, { error: 'must be an ISO 8601 date-time with its zone, e.g. 2026-01-01T10:00:00Z' })
  .transform((t, ctx) => {
    const ms = Date.parse(t);
    if (Number.isNaN(ms)) ctx.addIssue({ code: 'custom', message: 'is not a valid date-time' });
    return ms;
  });

export const messagesQuerySchema = z.strictObject({
  /** Digits with an optional leading + (stored without it). */
  destination: z.string().regex(/^\+?\d{1,20}$/, { error: 'must be digits, with an optional leading +' }).transform((d) => d.replace(/^\+/, '')).optional(),
  client: z.string().regex(/^[A-Za-z0-9_.@-]{1,64}$/, { error: 'must be a client name (1–64 letters, digits, _ . @ or -)' }).optional(),
  since: time.optional(),
  until: time.optional(),
  status: z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]], { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  limit: z.string().regex(/^\d{1,3}$/, { error: `must be a whole number 1–${MESSAGES_LIMIT_MAX}` }).transform(Number)
    .refine((n) => n >= 1 && n <= MESSAGES_LIMIT_MAX, { error: `must be a whole number 1–${MESSAGES_LIMIT_MAX}` }).optional(),
  /** The `next` of the page before. */
  after: z.string().regex(/^[1-9]\d{0,15}$/, { error: 'must be the next cursor of a previous page' }).transform(Number).optional(),
}, { error: 'the query is not valid' });

export function registerAdminMessageRoutes(app: FastifyInstance, admin: AdminHttpDeps): void {
  app.get('/messages', async (request): Promise<z.output<typeof adminMessageListSchema>> => {
    const q = parseInput(messagesQuerySchema, request.query ?? {}, '', 'the query');
    if (q.since !== undefined && q.until !== undefined && q.until <= q.since) throw new ApiError('VALIDATION', 'until: must be after since');
    const query: MessageQuery = { limit: q.limit ?? MESSAGES_LIMIT_DEFAULT };
    if (q.destination !== undefined) query.destination = q.destination;
    if (q.client !== undefined) query.client = q.client;
    if (q.since !== undefined) query.since = q.since;
    if (q.until !== undefined) query.until = q.until;
    if (q.status !== undefined) query.status = q.status;
    if (q.after !== undefined) query.after = q.after;
    const found = await admin.messages.findMessages(query);
    return {
      messages: found.messages.map((m) => ({
        id: m.id, client: m.client, upstream: m.upstream, sender: m.source, destination: m.destination, status: m.status, reason: m.reason,
        parts: m.parts, acceptedAt: iso(m.acceptedAt), updatedAt: iso(m.updatedAt),
      })),
      next: found.next === null ? null : String(found.next),
    };
  });

  app.get<{ Params: { id: string } }>('/messages/:id', async (request) => {
    const story = await admin.messages.messageStory(request.params.id);
    if (!story) throw new ApiError('MESSAGE_NOT_FOUND', `no message ${JSON.stringify(request.params.id)}`);
    return storyView(story);
  });
}

/** The story as GET /admin/messages/{id} answers it. */
export function storyView(story: MessageStory): z.output<typeof adminMessageStorySchema> {
  const m = story.message;
  return {
    message: {
      id: m.id, client: m.client, upstream: m.upstream, route: m.route, batchId: m.batchId, sender: m.source, destination: m.destination,
      text: m.text, encoding: m.encoding, status: m.status, reason: m.reason, acceptedAt: iso(m.acceptedAt), updatedAt: iso(m.updatedAt),
    },
    parts: story.parts.map((p) => ({
      part: p.part, state: p.state, status: p.status, reason: p.reason, smscId: p.smscId, bind: p.bind, attempts: p.attempts,
      sentAt: p.sentAt === null ? null : iso(p.sentAt), updatedAt: iso(p.updatedAt),
    })),
    history: messageHistory(story),
    events: story.events.map((e) => ({
      id: e.id, kind: e.kind, status: e.status, state: e.state, attempts: e.attempts, createdAt: iso(e.createdAt),
      nextAttemptAt: e.nextAttemptAt === null ? null : iso(e.nextAttemptAt), deliveredAt: e.deliveredAt === null ? null : iso(e.deliveredAt),
      lastError: e.lastError,
    })),
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
