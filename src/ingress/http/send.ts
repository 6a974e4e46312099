/**
 * POST /sms/sendSms and POST /sms/identify (messaging-service-api.md §4.1, §2.5).
 */
import type { FastifyInstance } from 'fastify';
import { assertSenderAllowed } from './auth.js';
import type { RouteContext } from './context.js';
import { scheduleFrom } from './schedule-time.js';
import { identifySchema, parseInput, sendSmsSchema } from './validation.js';

export function registerSendRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { acceptor, clock, identify } = ctx.deps;

  /** 200 with the message id as plain text, answered after the message is committed. */
  app.post('/sms/sendSms', async (request, reply) => {
    const client = ctx.auth.clientOf(request);
    const body = parseInput(sendSmsSchema, request.body);
    assertSenderAllowed(client, body.senderId);
    const schedule = scheduleFrom({ flag: body.isSchedule, time: body.time, gmt: body.gmt, repeat: body.repeat }, 'isSchedule', '', clock.wallNow());
    // charCount, smsParts, charLimit, delay and the regulatory ids are accepted and not used:
    // smppd counts parts itself and paces by the binds.
    const { messageId } = await acceptor.send({
      client: client.name,
      senderId: body.senderId,
      destination: body.destinationNumber,
      message: body.message,
      messageType: body.messageType,
      ...(body.expiryHour != null ? { expiryHour: body.expiryHour } : {}),
      ...(body.campaignName != null ? { campaignName: body.campaignName } : {}),
      ...(schedule ? { schedule } : {}),
    });
    return reply.type('text/plain; charset=utf-8').send(messageId);
  });

  app.post('/sms/identify', async (request) => identify(parseInput(identifySchema, request.body).message));
}
