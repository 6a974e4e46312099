/**
 * Scheduled campaigns (messaging-service-api.md §3.4): GET /sms/listSchedule, POST /sms/send-now
 * (scheduleId in the query or the JSON body: the provider does not say which), DELETE
 * /sms/abort/schedule?scheduleId=. A client sees and controls only its own schedules.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ScheduleState } from '../../store/batches.js';
import { ApiError } from '../../api/errors.js';
import { parseInput, queryId, sendNowSchema, toId } from '../../api/validation.js';
import type { RouteContext } from './context.js';
import { scheduleEntry, type ScheduleEntry } from './views.js';

const TRANSITIONS = {
  sendNow: { to: 'released', refusal: 'only scheduled campaigns can be sent now' },
  cancel: { to: 'cancelled', refusal: 'only scheduled campaigns can be cancelled' },
} as const satisfies Record<string, { to: Exclude<ScheduleState, 'scheduled'>; refusal: string }>;

export function registerScheduleRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store, clock } = ctx.deps;

  app.get('/sms/listSchedule', async (request) => {
    const client = ctx.auth.clientOf(request).name;
    const [schedules, batches] = await Promise.all([store.listSchedules(client), store.listBatches(client)]);
    const byId = new Map(batches.map((b) => [b.id, b]));
    return schedules.map((s) => scheduleEntry(s, byId.get(s.batchId)));
  });

  const change = (operation: keyof typeof TRANSITIONS, client: string, scheduleId: number): Promise<ScheduleEntry> => {
    const rule = TRANSITIONS[operation];
    return ctx.serial.run(`schedule:${scheduleId}`, async () => {
      const current = (await store.listSchedules(client)).find((x) => x.id === scheduleId);
      if (!current) throw notFound(scheduleId);
      if (current.state !== 'scheduled') throw new ApiError('INVALID_STATE', `schedule ${scheduleId} is ${current.state}: ${rule.refusal}`);
      const changed = await store.setScheduleState(client, scheduleId, rule.to, clock.wallNow());
      if (!changed) throw notFound(scheduleId);
      return scheduleEntry(changed, await store.getBatch(client, changed.batchId));
    });
  };

  app.post('/sms/send-now', async (request) => change('sendNow', ctx.auth.clientOf(request).name, sendNowId(request)));
  app.delete('/sms/abort/schedule', async (request) => change('cancel', ctx.auth.clientOf(request).name, queryId(request.query, 'scheduleId')));
}

/** From the query, or from a JSON body `{ "scheduleId": 12 }`; both given must agree. */
function sendNowId(request: FastifyRequest): number {
  const query = (request.query as Record<string, unknown> | undefined)?.scheduleId;
  const fromQuery = query === undefined ? undefined : toId(query, 'scheduleId');
  const fromBody = request.body === undefined || request.body === null ? undefined : toId(parseInput(sendNowSchema, request.body).scheduleId, 'scheduleId');
  if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody) {
    throw new ApiError('VALIDATION', 'scheduleId: the query and the body name different schedules');
  }
  const id = fromQuery ?? fromBody;
  if (id === undefined) throw new ApiError('VALIDATION', 'scheduleId: is required (in the query, or in a JSON body { "scheduleId": … })');
  return id;
}

function notFound(scheduleId: number): ApiError {
  return new ApiError('SCHEDULE_NOT_FOUND', `no schedule ${scheduleId} for this client`);
}
