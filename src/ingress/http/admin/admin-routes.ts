/**
 * The admin API's routes (ADMIN-CONTRACT: status, suspend and resume, messages), all under
 * /admin and behind `AdminAuth`: registered only when the config has an `admin` section. The
 * status page and its login add their routes to the same scope (`registerAdminScope`'s `extra`).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../api/errors.js';
import { parseInput } from '../../../api/validation.js';
import { isSmppdError } from '../../../core/errors.js';
import type { UpstreamSuspension } from '../../../store/upstream-suspensions.js';
import type { AdminHttpDeps } from './admin-context.js';
import type { adminStatusSchema, adminSuspensionSchema } from './admin-responses.js';
import { registerAdminMessageRoutes } from './admin-messages.js';

/** Longest reason a suspend may give (characters). */
export const SUSPEND_REASON_MAX = 200;

export const suspendSchema = z.strictObject({
  /** Why, for the status page and the log. */
  reason: z.string({ error: 'must be a string' }).max(SUSPEND_REASON_MAX, { error: `must be at most ${SUSPEND_REASON_MAX} characters` }).optional(),
}, { error: 'the body must be a JSON object { reason }' });

/**
 * The scope of every /admin route: the guard first (every route refuses who is not an admin), then
 * the routes of this module, then `extra`'s (the status page's). Call within a fastify plugin
 * registered with `{ prefix: '/admin' }`.
 */
export function registerAdminScope(scope: FastifyInstance, admin: AdminHttpDeps, extra?: (scope: FastifyInstance) => void): void {
  admin.auth.guard(scope);
  registerAdminRoutes(scope, admin);
  registerAdminMessageRoutes(scope, admin);
  extra?.(scope);
}

/** GET /admin/status, POST /admin/upstreams/{name}/suspend and /resume (paths relative to the /admin prefix). */
export function registerAdminRoutes(app: FastifyInstance, admin: AdminHttpDeps): void {
  app.get('/status', async (): Promise<z.output<typeof adminStatusSchema>> => admin.status());

  app.post<{ Params: { name: string } }>('/upstreams/:name/suspend', async (request): Promise<z.output<typeof adminSuspensionSchema>> => {
    const by = admin.auth.requireAdmin(request).name;
    const body = request.body === undefined ? {} : parseInput(suspendSchema, request.body);
    const s = await knownUpstream(request.params.name, () => admin.suspend(request.params.name, by, body.reason ?? null));
    return { upstream: s.upstream, suspended: suspensionView(s) };
  });

  app.post<{ Params: { name: string } }>('/upstreams/:name/resume', async (request): Promise<z.output<typeof adminSuspensionSchema>> => {
    const by = admin.auth.requireAdmin(request).name;
    await knownUpstream(request.params.name, () => admin.resume(request.params.name, by));
    return { upstream: request.params.name, suspended: null };
  });
}

/** A suspension as the API shows it. */
export function suspensionView(s: UpstreamSuspension): { since: string; by: string; reason: string | null } {
  return { since: new Date(s.since).toISOString(), by: s.by, reason: s.reason };
}

async function knownUpstream<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isSmppdError(e, 'UNKNOWN_UPSTREAM')) throw new ApiError('UNKNOWN_UPSTREAM', `no upstream named ${JSON.stringify(name)} in the configuration`);
    throw e;
  }
}
