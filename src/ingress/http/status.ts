/**
 * GET /sms/status/{messageId}: polling one message (not in the provider's SMS API; the issue asks
 * for it), and POST /sms/lookup, which SMPP cannot serve. `messageStatusOf` is also what the MCP
 * tool get_message_status runs.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../api/errors.js';
import type { RouteContext } from './context.js';
import { messageStatus, type MessageStatus } from './views.js';

/** The status of `client`'s message `id`; MESSAGE_NOT_FOUND when there is none. */
export async function messageStatusOf(ctx: RouteContext, client: string, id: string): Promise<MessageStatus> {
  const message = await ctx.deps.store.getMessage(id);
  // Another client's message is not found: ids do not confirm that a message exists.
  if (!message || message.client !== client) throw new ApiError('MESSAGE_NOT_FOUND', `no message ${JSON.stringify(id)} for this client`);
  return messageStatus(message);
}

export function registerStatusRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get<{ Params: { messageId: string } }>('/sms/status/:messageId', async (request) => (
    messageStatusOf(ctx, ctx.auth.clientOf(request).name, request.params.messageId)));

  app.post('/sms/lookup', async () => {
    throw new ApiError('NOT_IMPLEMENTED', 'number lookup (HLR/MNP) is a service of the provider\'s REST API and cannot be made over SMPP; call the provider for it');
  });
}
