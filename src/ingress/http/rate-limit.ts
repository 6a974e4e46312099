/**
 * The rate limit of the send routes (sendSms, sendbulk): an onRequest hook of their own, after
 * the token check and before the body is read, so a client past its `clients[].rateLimit` costs
 * neither a body parse nor an upload. 429 RATE_LIMITED with Retry-After (whole seconds).
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { retryAfterSeconds, type ClientRateLimiter } from '../../api/client-rate-limiter.js';
import { ApiError } from '../../api/errors.js';
import type { Authenticator } from './authenticator.js';
import { sendError } from './error-replies.js';

export type RateLimitHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

/**
 * Takes one send's token of `client`: undefined when it had one, else the 429 RATE_LIMITED
 * refusal (with Retry-After, whole seconds), counted by `onLimited`. The HTTP send routes and
 * the MCP tool send_sms take from the same buckets.
 */
export type SendTokens = (client: string) => ApiError | undefined;

export function sendTokens(limiter: ClientRateLimiter, onLimited?: (client: string) => void): SendTokens {
  return (client) => {
    const waitMs = limiter.take(client);
    if (waitMs === 0) return undefined;
    onLimited?.(client);
    const limit = limiter.limitOf(client);
    const seconds = retryAfterSeconds(waitMs);
    const rule = limit ? ` (clients[].rateLimit: ${limit.perSecond} per second, burst ${limit.burst})` : '';
    return new ApiError('RATE_LIMITED', `this client sends faster than its rate limit${rule}; retry after ${seconds} s`, { 'retry-after': String(seconds) });
  };
}

/**
 * `maxBodyBytes`: a refused request whose body is larger (or of unknown length) has its
 * connection closed rather than its body read and thrown away; a smaller one keeps it, as a
 * client that retries would pay a new TLS handshake for it.
 */
export function rateLimitHook(auth: Authenticator, take: SendTokens, maxBodyBytes: number): RateLimitHook {
  return (request, reply, done) => {
    const refusal = take(auth.clientOf(request).name);
    if (refusal === undefined) {
      done();
      return;
    }
    const length = Number(request.headers['content-length'] ?? 0);
    if (request.headers['transfer-encoding'] !== undefined || !(length <= maxBodyBytes)) reply.header('connection', 'close');
    sendError(reply, request, refusal);
  };
}
