/**
 * The one place HTTP error responses are written (messaging-service-api.md §7): the API's
 * five-field body (api/errors.ts) for every refusal, and the gateway's two-field body
 * `{ error, message }` for a missing or unknown token (401). Refusals made before a route runs
 * (the listener's: the HTTP parser, timeouts, a missing Host, shutdown) use the same body,
 * written on the Node response or, with no request to answer, on the socket.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isSmppdError } from '../../core/errors.js';
import type { Log } from '../../core/log.js';
import type { IdempotentResponse } from '../../store/idempotency.js';
import type { RouteMethods } from './route-methods.js';
import { API_ERRORS, ApiError, errorBodyAt, reasonPhrase, toApiError, type ApiErrorCode, type ErrorBody } from '../../api/errors.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The path of the request without its query string: the body's requestUri. */
export function requestPath(request: FastifyRequest): string {
  return pathOf(request.url);
}

/** A request target without its query string (which may carry what is not ours to echo). */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

export function errorBody(request: FastifyRequest, code: ApiErrorCode, message: string, status: number = API_ERRORS[code]): ErrorBody {
  return errorBodyAt(code, message, requestPath(request), status);
}

/**
 * The five-field body on a Node response, for a request refused before fastify routes it (a
 * missing Host, an unsupported Expect, shutdown, a body that did not arrive in time). The
 * connection is closed after it: what is left of the request is not read.
 */
export function writeErrorResponse(res: ServerResponse, code: ApiErrorCode, message: string, requestUri: string): void {
  const body = JSON.stringify(errorBodyAt(code, message, requestUri));
  res.writeHead(API_ERRORS[code], { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

/**
 * A whole HTTP/1.1 response with the five-field body, for a socket whose request the HTTP
 * parser refused or timed out before a request object existed. It ends with the connection.
 */
export function errorResponseBytes(code: ApiErrorCode, message: string, requestUri: string): string {
  const status = API_ERRORS[code];
  const body = JSON.stringify(errorBodyAt(code, message, requestUri));
  return `HTTP/1.1 ${status} ${reasonPhrase(status)}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Sends the five-field body. */
export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type(JSON_TYPE).send(errorBody(request, error.code, error.message, error.status));
}

/** A thrown value as the error handler answers it (status and five-field body), to be answered again to a repeat of its request. */
export function errorResponseOf(request: FastifyRequest, e: unknown): IdempotentResponse {
  const { error } = toHttpError(e);
  return { status: error.status, body: JSON.stringify(errorBody(request, error.code, error.message, error.status)) };
}

/** A recorded response, answered again (JSON: a sendbulk response or a five-field body). */
export function sendRecorded(reply: FastifyReply, response: IdempotentResponse): FastifyReply {
  return reply.code(response.status).type(JSON_TYPE).send(response.body);
}

/** The gateway's 401 (§5, §7): two fields, and a challenge. */
export function sendUnauthorized(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(401).header('www-authenticate', 'Bearer').type(JSON_TYPE).send({ error: reasonPhrase(401), message });
}

/** fastify's and @fastify/multipart's own refusals, by their `code`. */
const FROM_FASTIFY: Readonly<Record<string, ApiErrorCode>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_REQ_FILE_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_PARTS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_FILES_LIMIT: 'INVALID_MULTIPART',
  FST_FIELDS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_PROTO_VIOLATION: 'INVALID_MULTIPART',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'INVALID_MULTIPART',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  FST_INVALID_JSON_FIELD_ERROR: 'INVALID_JSON',
};

const MESSAGES: Partial<Record<ApiErrorCode, string>> = {
  PAYLOAD_TOO_LARGE: 'the request is larger than this server accepts (http.maxBodyBytes for JSON, http.maxUploadBytes for a sendbulk file)',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported Content-Type: send application/json (sendbulk: multipart/form-data)',
  INVALID_JSON: 'the body is not valid JSON (sendbulk: a part sent as application/json is not valid JSON)',
  INVALID_MULTIPART: 'the body is not valid multipart/form-data',
};

/**
 * Any thrown value as an ApiError, fastify's own refusals included; `internal` is true when it
 * is a bug or a store failure (logged).
 */
export function toHttpError(e: unknown): { error: ApiError; internal: boolean } {
  if (e instanceof ApiError || isSmppdError(e)) return toApiError(e);
  const fe = e as Partial<FastifyError> | null;
  const mapped = typeof fe?.code === 'string' ? FROM_FASTIFY[fe.code] : undefined;
  if (mapped !== undefined) return { error: new ApiError(mapped, MESSAGES[mapped] ?? fe?.message ?? mapped), internal: false };
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // fastify's other client errors keep their status; their messages name no secret.
    return { error: new ApiError('BAD_REQUEST', typeof fe?.message === 'string' ? fe.message : 'bad request', {}, status), internal: false };
  }
  return toApiError(e);
}

/** fastify's error handler: every refusal in the five-field body; unexpected ones logged (never with headers). */
export function errorHandler(log: Log) {
  return (e: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { error, internal } = toHttpError(e);
    if (internal) {
      const err = e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { value: String(e) };
      log.error({ event: 'http_internal_error', method: request.method, path: requestPath(request), err }, 'HTTP request failed');
    }
    return sendError(reply, request, error);
  };
}

/** A request no route took: 405 with Allow when its path is known with other methods (RFC 9110 §15.5.6), else 404. */
export function notFoundHandler(routes: Pick<RouteMethods, 'allowed'>) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = requestPath(request);
    const allowed = routes.allowed(path);
    if (allowed.length === 0) return sendError(reply, request, new ApiError('NOT_FOUND', `no route ${request.method} ${path}`));
    const allow = allowed.join(', ');
    return sendError(reply, request, new ApiError('METHOD_NOT_ALLOWED', `${path} takes ${allow}, not ${request.method}`, { allow }));
  };
}

/** A body of a Content-Type the route does not take. */
export function unsupportedMediaType(): ApiError {
  return new ApiError('UNSUPPORTED_MEDIA_TYPE', MESSAGES.UNSUPPORTED_MEDIA_TYPE!);
}
