/**
 * A queue message as a send request, checked by the API's contract as the HTTP API checks it:
 * the body is the sendSms body (api/validation.ts: the same fields, rules and messages), plus
 * `client` (whose message it is; default `amqp.client`; queue-identity.ts says which it may be)
 * and `reference` (the caller's own, echoed in replies and refusals). A refusal is the
 * five-field error body with `requestUri: amqp://<queue>`.
 */
import { z } from 'zod';
import { ErrorCode, isSmppdError } from '../../core/errors.js';
import type { SendRequest } from '../../dispatch/accept.js';
import { QUEUE_CAPS } from '../../dispatch/queue-room.js';
import { assertSenderAllowed, type ApiClient } from '../../api/auth.js';
import { ApiError, errorBodyAt, toApiError, type ApiErrorCode, type ErrorBody } from '../../api/errors.js';
import { sendRequestFrom } from '../../api/send-request.js';
import { FREE_TEXT_MAX, FREE_TEXT_RULE, freeText, freeTextProblem, parseInput, sendSmsSchema } from '../../api/validation.js';
import { queueClient, type QueueAccess, type Vouched } from './queue-identity.js';

/** The caller's reference: at most this many characters, by the free-text rule. */
export const REFERENCE_MAX = FREE_TEXT_MAX.reference;

/** A queue message's body: sendSms's fields (strict: an unknown field is refused), `client` and `reference`. */
export const queueSendSchema = sendSmsSchema.extend({
  client: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).nullish()
    .meta({ description: 'The client the message is sent as (its senders apply). Default: amqp.client.' }),
  reference: freeText(REFERENCE_MAX).nullish()
    .meta({ description: `The caller's own reference, echoed in the reply and in a refusal. At most ${REFERENCE_MAX} characters; ${FREE_TEXT_RULE}.` }),
});

export interface ReadOptions {
  /** The configured clients by name. */
  clients: ReadonlyMap<string, ApiClient>;
  /** Which clients the queue may act as, and how a message says which. */
  access: QueueAccess;
  /** What the broker vouches for about this message (its user_id). */
  vouched: Vouched;
  /** Largest body, bytes. */
  maxBytes: number;
  /** `amqp://<queue>`: the refusal's requestUri. */
  requestUri: string;
  /** Wall ms: a schedule's "not in the past" check. */
  now: number;
}

export type ReadResult =
  | { ok: true; request: SendRequest; reference: string | null }
  | { ok: false; refusal: ErrorBody; reference: string | null };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Reads and checks one message body. Pure: the clients, the limits and the time are arguments. */
export function readSendMessage(content: Buffer, o: ReadOptions): ReadResult {
  if (content.length > o.maxBytes) {
    return refused('PAYLOAD_TOO_LARGE', `the message body is larger than amqp.maxMessageBytes (${o.maxBytes} bytes)`, o.requestUri, null);
  }
  let input: unknown;
  try {
    input = JSON.parse(UTF8.decode(content));
  } catch {
    return refused('INVALID_JSON', 'the message body is not valid JSON (UTF-8)', o.requestUri, null);
  }
  const given = (input as { reference?: unknown } | null)?.reference;
  // Echoed in the refusal too: only one that passes its own rule.
  const reference = typeof given === 'string' && given.length <= REFERENCE_MAX && freeTextProblem(given) === null ? given : null;
  try {
    const body = parseInput(queueSendSchema, input, '', 'the message body');
    const client = o.clients.get(queueClient(o.access, body.client, o.vouched));
    // Allowed on the queue, but gone from clients[] since (a reload).
    if (client === undefined) throw new ApiError('CLIENT_NOT_ALLOWED', 'client: is not a client of this smppd any more');
    assertSenderAllowed(client, body.senderId);
    return { ok: true, request: sendRequestFrom(client.name, body, o.now), reference };
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return refused(e.code, e.message, o.requestUri, reference);
  }
}

/**
 * What becomes of a message whose send failed: refused for good, or tried again later. `ownCap`
 * (true or absent): QUEUE_FULL for the client's own clients[].maxQueued, which holds up no other client.
 * `alone` (true or absent): a failure of this message only (its id is in use), not of the sends.
 */
export type SendFailure =
  | { kind: 'refuse'; refusal: ErrorBody }
  | { kind: 'retry'; code: 'QUEUE_FULL' | 'INTERNAL'; retryAfterMs: number; ownCap?: boolean; alone?: boolean };

/**
 * A failed `Acceptor.send`: what the HTTP API answers 4xx for (text not GSM-7, too long …) is
 * refused; QUEUE_FULL and anything unexpected (a store error) pass, and are tried again.
 */
export function classifyFailure(e: unknown, requestUri: string): SendFailure {
  const { error, internal } = toApiError(e);
  if (internal || error.code === 'INTERNAL') return { kind: 'retry', code: 'INTERNAL', retryAfterMs: 0 };
  // Its id is another instance's send, still running: this message alone is tried again later.
  if (error.code === 'IDEMPOTENCY_KEY_IN_USE') return { kind: 'retry', code: 'INTERNAL', retryAfterMs: Number(error.headers['retry-after'] ?? 1) * 1000, alone: true };
  if (error.code === 'QUEUE_FULL') {
    const seconds = Number(error.headers['retry-after']);
    const ownCap = isSmppdError(e, ErrorCode.QUEUE_FULL) && e.details?.limit === QUEUE_CAPS.client;
    return { kind: 'retry', code: 'QUEUE_FULL', retryAfterMs: Number.isFinite(seconds) ? seconds * 1000 : 1000, ...(ownCap ? { ownCap } : {}) };
  }
  return { kind: 'refuse', refusal: refusalBody(error.code, error.message, requestUri, error.status) };
}

/**
 * A refusal's message is cut to this many characters: it travels in a header of the dead
 * letter, and all of a message's properties must fit in one AMQP frame (128 KiB by default);
 * a message naming many unknown fields, or a very long one, must not make a copy that cannot be
 * published (the broker would close the connection and the message come back again and again).
 */
export const REFUSAL_MESSAGE_MAX = 2_000;

/** The five-field body (messaging-service-api.md §7), as the HTTP API renders it, its message cut to REFUSAL_MESSAGE_MAX. */
function refusalBody(code: ApiErrorCode, message: string, requestUri: string, status?: number): ErrorBody {
  const text = message.length > REFUSAL_MESSAGE_MAX ? `${message.slice(0, REFUSAL_MESSAGE_MAX - 1)}…` : message;
  return errorBodyAt(code, text, requestUri, status);
}

function refused(code: ApiErrorCode, message: string, requestUri: string, reference: string | null): ReadResult {
  return { ok: false, refusal: refusalBody(code, message, requestUri), reference };
}
