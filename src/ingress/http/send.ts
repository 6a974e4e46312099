/**
 * POST /sms/sendSms and POST /sms/identify (messaging-service-api.md §4.1, §2.5).
 */
import type { FastifyInstance } from 'fastify';
import { assertSenderAllowed } from '../../api/auth.js';
import { sendRequestFrom } from '../../api/send-request.js';
import { identifySchema, parseInput, sendSmsSchema } from '../../api/validation.js';
import type { RouteContext } from './context.js';

export function registerSendRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { acceptor, clock, identify } = ctx.deps;

  /** 200 with the message id as plain text, answered after the message is committed. */
  app.post('/sms/sendSms', { onRequest: ctx.limitRate }, async (request, reply) => {
    const client = ctx.auth.clientOf(request);
    const body = parseInput(sendSmsSchema, request.body);
    assertSenderAllowed(client, body.senderId);
    const { messageId } = await acceptor.send(sendRequestFrom(client.name, body, clock.wallNow()));
    return reply.type('text/plain; charset=utf-8').send(messageId);
  });

  app.post('/sms/identify', async (request) => {
    const client = ctx.auth.clientOf(request);
    const body = parseInput(identifySchema, request.body);
    return identify(body.message, client.name, body.destinationNumber);
  });
}
