/**
 * POST /sms/sendSms and POST /sms/identify (messaging-service-api.md §4.1, §2.5).
 */
import type { FastifyInstance } from 'fastify';
import { assertSenderAllowed } from '../../api/auth.js';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf, RequestFingerprint } from '../../api/idempotency-key.js';
import { sendRequestFrom } from '../../api/send-request.js';
import { identifySchema, parseInput, sendSmsSchema } from '../../api/validation.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { SendOptions } from '../../dispatch/accept.js';
import type { RouteContext } from './context.js';

export function registerSendRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { acceptor, clock, identify } = ctx.deps;

  /**
   * 200 with the message id as plain text, answered after the message is committed. With an
   * Idempotency-Key the key is committed with the message, and a repeat of the request (the same
   * JSON body, whatever its field order and white space) is answered the same id, even when the
   * first answer was lost after the commit; what depends on the time or the configuration (a
   * schedule's time, the client's senders) is checked on the first only.
   */
  app.post('/sms/sendSms', { onRequest: ctx.limitRate }, async (request, reply) => {
    const client = ctx.auth.clientOf(request);
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    const body = parseInput(sendSmsSchema, request.body);
    const send = async (options: SendOptions = {}): Promise<string> => {
      assertSenderAllowed(client, body.senderId);
      return (await acceptor.send(sendRequestFrom(client.name, body, clock.wallNow()), options)).messageId;
    };
    const messageId = key === undefined ? await send() : await ctx.idempotency.gate.run({
      scope: 'http', client: client.name, key, keepMs: ctx.idempotency.keepMs,
      fingerprint: new RequestFingerprint('POST /sms/sendSms').json(request.body).digest(),
    }, {
      first: (idempotencyKey) => send({ idempotencyKey }),
      replay: (record) => {
        // The fingerprint names the endpoint: a key of a sendbulk upload is refused before this.
        if (record.messageId === null) throw new SmppdError(ErrorCode.INTERNAL, 'a sendSms idempotency key without its message');
        return record.messageId;
      },
    });
    return reply.type('text/plain; charset=utf-8').send(messageId);
  });

  app.post('/sms/identify', async (request) => {
    const client = ctx.auth.clientOf(request);
    const body = parseInput(identifySchema, request.body);
    return identify(body.message, client.name, body.destinationNumber);
  });
}
