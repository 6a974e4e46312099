/**
 * POST /sms/sendSms and POST /sms/identify (messaging-service-api.md §4.1, §2.5).
 */
import type { FastifyInstance } from 'fastify';
import type { SendRequest } from '../../dispatch/accept.js';
import { assertSenderAllowed } from './auth.js';
import type { RouteContext } from './context.js';
import { scheduleFrom } from './schedule-time.js';
import { identifySchema, parseInput, sendSmsSchema, type SendSmsBody } from './validation.js';

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

  app.post('/sms/identify', async (request) => identify(parseInput(identifySchema, request.body).message));
}

/**
 * A validated sendSms body as the acceptor takes it: the one mapping of the HTTP and the queue
 * ingress. `now`: wall ms, for the schedule's "not in the past" check. Throws VALIDATION
 * (ApiError) for a schedule that is inconsistent or in the past.
 */
export function sendRequestFrom(client: string, body: SendSmsBody, now: number): SendRequest {
  const schedule = scheduleFrom({ flag: body.isSchedule, time: body.time, gmt: body.gmt, repeat: body.repeat }, 'isSchedule', '', now);
  // charCount, smsParts, charLimit, delay and the regulatory ids are accepted and not used:
  // smppd counts parts itself and paces by the binds.
  return {
    client,
    senderId: body.senderId,
    destination: body.destinationNumber,
    message: body.message,
    messageType: body.messageType,
    ...(body.expiryHour != null ? { expiryHour: body.expiryHour } : {}),
    ...(body.campaignName != null ? { campaignName: body.campaignName } : {}),
    ...(schedule ? { schedule } : {}),
  };
}
