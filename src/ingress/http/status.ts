/**
 * GET /sms/status/{messageId}: polling one message (not in the provider's SMS API; the issue asks
 * for it), and POST /sms/lookup, which SMPP cannot serve.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { RouteContext } from './context.js';
import { messageStatus } from './views.js';

export function registerStatusRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get<{ Params: { messageId: string } }>('/sms/status/:messageId', async (request) => {
    const client = ctx.auth.clientOf(request).name;
    const id = request.params.messageId;
    const message = await ctx.deps.store.getMessage(id);
    // Another client's message is not found: ids do not confirm that a message exists.
    if (!message || message.client !== client) throw new ApiError('MESSAGE_NOT_FOUND', `no message ${JSON.stringify(id)} for this client`);
    return messageStatus(message);
  });

  app.post('/sms/lookup', async () => {
    throw new ApiError('NOT_IMPLEMENTED', 'number lookup (HLR/MNP) is a service of the provider\'s REST API and cannot be made over SMPP; call the provider for it');
  });
}
