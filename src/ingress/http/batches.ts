/**
 * The SMS jobs of a client (messaging-service-api.md §2.4, §3.3): GET /sms/list, GET /sms/edit,
 * GET /sms/pause, GET /sms/resume, DELETE /sms/abort, each but the list with `batch_Id`.
 * A client sees and controls only its own batches; another client's batch is not found.
 * `batchList` is also what the MCP tool list_batches runs.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BatchState } from '../../store/batches.js';
import { ApiError } from '../../api/errors.js';
import { queryId } from '../../api/validation.js';
import type { RouteContext } from './context.js';
import { batchDetail, batchListEntry, type BatchDetail, type BatchListEntry } from './views.js';

/** §3.3, with its condition text as the refusal. */
const TRANSITIONS = {
  pause: { from: ['active'], to: 'paused', refusal: 'only active batches can be paused' },
  resume: { from: ['paused'], to: 'active', refusal: 'only paused batches can be resumed' },
  abort: { from: ['active', 'paused'], to: 'aborted', refusal: 'only active or paused batches can be aborted; an abort is permanent' },
} as const satisfies Record<string, { from: readonly BatchState[]; to: BatchState; refusal: string }>;
type Operation = keyof typeof TRANSITIONS;

/** All jobs of `client`, as GET /sms/list answers them; not paginated (§4.1). */
export async function batchList(ctx: RouteContext, client: string): Promise<BatchListEntry[]> {
  return (await ctx.deps.store.listBatches(client)).map(batchListEntry);
}

export function registerBatchRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store, clock } = ctx.deps;

  app.get('/sms/list', async (request) => batchList(ctx, ctx.auth.clientOf(request).name));

  app.get('/sms/edit', async (request) => {
    const { client, batchId } = target(ctx, request);
    return batchDetail(await found(store.getBatch(client, batchId), batchId));
  });

  const change = (operation: Operation) => async (request: FastifyRequest): Promise<BatchDetail> => {
    const { client, batchId } = target(ctx, request);
    const rule = TRANSITIONS[operation];
    return ctx.serial.run(`batch:${batchId}`, async () => {
      const batch = await found(store.getBatch(client, batchId), batchId);
      if (!(rule.from as readonly BatchState[]).includes(batch.state)) {
        throw new ApiError('INVALID_STATE', `batch ${batchId} is ${batch.state}: ${rule.refusal}`);
      }
      return batchDetail(await found(store.setBatchState(client, batchId, rule.to, clock.wallNow()), batchId));
    });
  };

  app.get('/sms/pause', change('pause'));
  app.get('/sms/resume', change('resume'));
  app.delete('/sms/abort', change('abort'));
}

function target(ctx: RouteContext, request: FastifyRequest): { client: string; batchId: number } {
  return { client: ctx.auth.clientOf(request).name, batchId: queryId(request.query, 'batch_Id') };
}

async function found<T>(lookup: Promise<T | undefined>, batchId: number): Promise<T> {
  const value = await lookup;
  if (value === undefined) throw new ApiError('BATCH_NOT_FOUND', `no batch ${batchId} for this client`);
  return value;
}
