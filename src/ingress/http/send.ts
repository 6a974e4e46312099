/**
 * POST /sms/sendSms and POST /sms/identify (messaging-service-api.md §4.1, §2.5); `sendSms` and
 * `identifySms` are also what the MCP tools send_sms and identify_sms run (mcp-tools.ts).
 */
import type { FastifyInstance } from 'fastify';
import { assertSenderAllowed, type ApiClient } from '../../api/auth.js';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf, RequestFingerprint } from '../../api/idempotency-key.js';
import { sendRequestFrom } from '../../api/send-request.js';
import { identifySchema, parseInput, sendSmsSchema } from '../../api/validation.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import type { SendOptions } from '../../dispatch/accept.js';
import type { IdentifyResult } from '../../sms/identify.js';
import type { RouteContext } from './context.js';

/**
 * Validates `input` as a sendSms body and sends it as `client`; resolves to the message id once
 * the message is committed. With a `key` (an Idempotency-Key) the key is committed with the
 * message, and a repeat of the request (the same body, whatever its field order and white space)
 * is answered the same id, even when the first answer was lost after the commit; what depends on
 * the time or the configuration (a schedule's time, the client's senders) is checked on the
 * first only. Throws ApiError / SmppdError as the API answers them. The client's rate limit is
 * the caller's: taken before the body is read.
 */
export async function sendSms(ctx: RouteContext, client: ApiClient, input: unknown, key: string | undefined): Promise<string> {
  const { acceptor, clock } = ctx.deps;
  const body = parseInput(sendSmsSchema, input);
  const send = async (options: SendOptions = {}): Promise<string> => {
    assertSenderAllowed(client, body.senderId);
    return (await acceptor.send(sendRequestFrom(client.name, body, clock.wallNow()), options)).messageId;
  };
  if (key === undefined) return send();
  return ctx.idempotency.gate.run({
    scope: 'http', client: client.name, key, keepMs: ctx.idempotency.keepMs,
    fingerprint: new RequestFingerprint('POST /sms/sendSms').json(input).digest(),
  }, {
    first: (idempotencyKey) => send({ idempotencyKey }),
    replay: (record) => {
      // The fingerprint names the endpoint: a key of a sendbulk upload is refused before this.
      if (record.messageId === null) throw new SmppdError(ErrorCode.INTERNAL, 'a sendSms idempotency key without its message');
      return record.messageId;
    },
  });
}

/** Validates `input` as an identify body: the text as the upstream its route would take for `client` would send it. */
export function identifySms(ctx: RouteContext, client: ApiClient, input: unknown): IdentifyResult {
  const body = parseInput(identifySchema, input);
  return ctx.deps.identify(body.message, client.name, body.destinationNumber);
}

export function registerSendRoutes(app: FastifyInstance, ctx: RouteContext): void {
  /** 200 with the message id as plain text, answered after the message is committed. */
  app.post('/sms/sendSms', { onRequest: ctx.limitRate }, async (request, reply) => {
    const client = ctx.auth.clientOf(request);
    const key = idempotencyKeyOf(request.headers[IDEMPOTENCY_KEY_HEADER]);
    const messageId = await sendSms(ctx, client, request.body, key);
    return reply.type('text/plain; charset=utf-8').send(messageId);
  });

  app.post('/sms/identify', async (request) => identifySms(ctx, ctx.auth.clientOf(request), request.body));
}
