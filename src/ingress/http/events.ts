/**
 * Webhook events over HTTP: POST /sms/resendDlr (the provider's re-push of delivery statuses,
 * API §4.1, §6.3) and smppd's dead-event controls, GET /events/dead and POST
 * /events/dead/resend. A client sees and re-sends only its own events; a client without a
 * webhook has no events to re-push.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { MAX_RESEND_DAYS } from '../../config/schema.js';
import type { DeadEvent } from '../../store/event-resends.js';
import { ApiError } from '../../api/errors.js';
import type { deadEventListSchema, deadResendResultSchema, resendDlrResultSchema } from '../../api/responses.js';
import { deadResendSchema, parseDateBound, parseInput, resendDlrSchema } from '../../api/validation.js';
import type { RouteContext } from './context.js';

/** Messages per commit of a resendDlr: a wide date range is many short transactions, not one long one. */
const RESEND_PAGE = 1_000;
const DAY_MS = 86_400_000;
const DEAD_PAGE_DEFAULT = 100;
const DEAD_PAGE_MAX = 1_000;

/** GET /events/dead's query parameters, as they are checked and as /openapi.json describes them. */
export const DEAD_EVENTS_QUERY = {
  limit: z.int().min(1).meta({ description: `At most this many (default ${DEAD_PAGE_DEFAULT}; more than ${DEAD_PAGE_MAX} is ${DEAD_PAGE_MAX}).` }),
  after: z.int().min(0).meta({ description: 'Only ids above this one (the next of the previous page). Default 0.' }),
};

/** One entry of GET /events/dead. */
export type DeadEventEntry = z.output<typeof deadEventListSchema>['events'][number];

export function registerEventRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store, clock, events } = ctx.deps;

  const clientWithWebhook = (request: FastifyRequest): string => {
    const client = ctx.auth.clientOf(request).name;
    if (!events.hasWebhook(client)) {
      throw new ApiError('NO_WEBHOOK', 'this client has no webhook (clients[].webhook.url in the smppd config), so there are no events to send');
    }
    return client;
  };

  app.post('/sms/resendDlr', async (request): Promise<z.output<typeof resendDlrResultSchema>> => {
    const client = clientWithWebhook(request);
    const body = parseInput(resendDlrSchema, request.body);
    const from = parseDateBound(body.startDate)!.start;
    const to = parseDateBound(body.endDate)!.end;
    if (to <= from) throw new ApiError('VALIDATION', 'endDate: must not be before startDate');
    // Memory is one page whatever the range; the range bounds the store's work (each message read
    // with its parts, an outbox row written for it) and the burst of events to the webhook.
    const maxDays = ctx.deps.limits.maxResendDays ?? MAX_RESEND_DAYS;
    // `to` is the first ms after endDate: its last instant may be maxDays after startDate's first.
    if (to - 1 - from > maxDays * DAY_MS) {
      throw new ApiError('VALIDATION', `startDate, endDate: the range is longer than ${maxDays} day${maxDays === 1 ? '' : 's'} (http.maxResendDays); ask for it in several requests of at most ${maxDays} days`);
    }
    const filter = {
      client, from, to,
      ...(body.senderId != null ? { senderId: body.senderId } : {}),
      ...(body.messageStatus != null ? { status: body.messageStatus } : {}),
    };
    // One at a time per client: ten at once would be ten times the store's work.
    const queued = await ctx.serial.run(`resendDlr:${client}`, async () => {
      let total = 0;
      for (let cursor: number | null = 0; cursor !== null;) {
        const page: { queued: number; next: number | null } = await store.resendStatusEvents(filter, cursor, RESEND_PAGE, clock.wallNow());
        total += page.queued;
        cursor = page.next;
      }
      return total;
    });
    events.wake();
    return { queued };
  });

  app.get('/events/dead', async (request): Promise<z.output<typeof deadEventListSchema>> => {
    const client = clientWithWebhook(request);
    const q = (request.query ?? {}) as Record<string, unknown>;
    const limit = pageSize(q.limit);
    const after = q.after === undefined ? 0 : wholeNumber(q.after, 'after');
    const dead = await store.listDeadEvents(client, limit, after);
    return { events: dead.map(deadEntry), next: dead.length === limit ? dead.at(-1)!.id : null };
  });

  app.post('/events/dead/resend', async (request): Promise<z.output<typeof deadResendResultSchema>> => {
    const client = clientWithWebhook(request);
    const body = parseInput(deadResendSchema, request.body);
    const result = await store.resendDeadEvents(client, body.all === true ? null : body.ids ?? [], clock.wallNow());
    events.wake();
    return result;
  });
}

function deadEntry(e: DeadEvent): DeadEventEntry {
  return {
    id: e.id, kind: e.kind, messageId: e.messageId, createdAt: new Date(e.createdAt).toISOString(),
    diedAt: new Date(e.diedAt).toISOString(), attempts: e.attempts, lastError: e.lastError, event: JSON.parse(e.payload) as DeadEventEntry['event'],
  };
}

function pageSize(value: unknown): number {
  return value === undefined ? DEAD_PAGE_DEFAULT : Math.min(DEAD_PAGE_MAX, wholeNumber(value, 'limit'));
}

function wholeNumber(value: unknown, name: keyof typeof DEAD_EVENTS_QUERY): number {
  const text = typeof value === 'string' ? value : '';
  const schema = DEAD_EVENTS_QUERY[name];
  if (!/^\d{1,15}$/.test(text) || !schema.safeParse(Number(text)).success) throw new ApiError('VALIDATION', `${name}: must be a whole number ≥ ${schema.minValue}`);
  return Number(text);
}
