/**
 * The one place HTTP error bodies are made (messaging-service-api.md §7): the five-field body
 * `{ status, error, message, errorCode, requestUri }` for every refusal, and the gateway's
 * two-field body `{ error, message }` for a missing or unknown token (401). Refusals made
 * before a route runs (the listener's: the HTTP parser, timeouts, a missing Host, shutdown)
 * use the same body, written on the Node response or, with no request to answer, on the socket.
 *
 * `errorCode` values are stable: clients branch on them after the status, so never rename one.
 * Messages are for people and never carry a token or a header.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isSmppdError, type SmppdError } from '../../core/errors.js';
import type { Log } from '../../core/log.js';

/** Every `errorCode` the HTTP API answers, with its status. README lists them. */
export const API_ERRORS = {
  /** A field is missing, unknown, of the wrong type, or breaks its rule (number format, time in the past, …). */
  VALIDATION: 400,
  /** The body is not valid JSON (sendSms, identify, send-now; bulkRequest inside sendbulk). */
  INVALID_JSON: 400,
  /** sendbulk: not multipart/form-data, a part missing, unknown or given twice, or a malformed body. */
  INVALID_MULTIPART: 400,
  /** messageType TEXT with characters outside GSM 03.38; the message names them. */
  TEXT_NOT_GSM7: 400,
  /** The text needs more parts than the upstream's maxParts. */
  MESSAGE_TOO_LONG: 400,
  /** Characters the upstream's default alphabet (latin1, ascii) cannot carry. */
  TEXT_NOT_REPRESENTABLE: 400,
  /** A batch or schedule operation its state does not allow (§3.3, §3.4); the message says which state it needs. */
  INVALID_STATE: 400,
  /** resendDlr, /events/dead: the client has no webhook configured, so it has no events. */
  NO_WEBHOOK: 400,
  /**
   * Any other malformed request: one fastify refuses (a bad URL, a bad Content-Length), one the
   * HTTP parser refuses (a malformed request line, header or chunked body), or an HTTP/1.1
   * request without a Host header (RFC 9112 §3.2). The parser's refusals close the connection.
   */
  BAD_REQUEST: 400,
  /** The token may not use this senderId (the client's `senders` allow-list). */
  SENDER_NOT_ALLOWED: 403,
  /** Queue ingress: the message may not act as this client on this queue (amqp.clients, amqp.users). */
  CLIENT_NOT_ALLOWED: 403,
  /** No batch with this batch_Id for this client. */
  BATCH_NOT_FOUND: 404,
  /** No schedule with this scheduleId for this client. */
  SCHEDULE_NOT_FOUND: 404,
  /** No message with this id for this client. */
  MESSAGE_NOT_FOUND: 404,
  /** No such path, or not with this method. */
  NOT_FOUND: 404,
  /**
   * The request did not arrive whole in time: its headers within http.headersTimeoutSeconds, its
   * body within http.requestTimeoutSeconds of its headers (sendbulk: http.bulkRequestTimeoutSeconds).
   * The connection is closed.
   */
  REQUEST_TIMEOUT: 408,
  /**
   * The body or the uploaded file is larger than http.maxBodyBytes / http.maxUploadBytes, or a
   * chunked body's chunk extensions are larger than the HTTP parser takes (that closes the connection).
   */
  PAYLOAD_TOO_LARGE: 413,
  /** A Content-Type the endpoint does not take (JSON endpoints take application/json, sendbulk multipart/form-data). */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An Expect header other than 100-continue (RFC 9110 §10.1.1), the one expectation served. The connection is closed. */
  EXPECTATION_FAILED: 417,
  /** More queued work than limits.maxQueued; a Retry-After header says when to try again. */
  QUEUE_FULL: 429,
  /** More send requests than the client's clients[].rateLimit; a Retry-After header says when to try again. Other clients are not affected. */
  RATE_LIMITED: 429,
  /**
   * sendbulk: http.maxConcurrentUploads uploads are in progress already, or this client has half
   * of them (at least 1); refused before the file is read. A Retry-After header (5 s) says when to
   * try again.
   */
  TOO_MANY_UPLOADS: 429,
  /** The request line and headers are larger than the HTTP parser takes (16 KiB). The connection is closed. */
  HEADERS_TOO_LARGE: 431,
  /** Unexpected; the smppd log has the details. Retry with backoff. */
  INTERNAL: 500,
  /** POST /sms/lookup: number lookup (HLR/MNP) is a REST service of the provider, not available over SMPP. */
  NOT_IMPLEMENTED: 501,
  /**
   * smppd is stopping: a request that arrives on a connection still open is not taken, and the
   * connection is closed. Retry on a new connection (another instance, or this one restarted).
   */
  SHUTTING_DOWN: 503,
} as const satisfies Record<string, number>;
export type ApiErrorCode = keyof typeof API_ERRORS;

/** Reason phrases of the statuses the API uses (RFC 9110). */
const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 408: 'Request Timeout', 411: 'Length Required', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
  417: 'Expectation Failed', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
};

const JSON_TYPE = 'application/json; charset=utf-8';

/** The five-field error body (§7). */
export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  errorCode: ApiErrorCode;
  requestUri: string;
}

/** A refusal the routes throw; the error handler renders it. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    /** The code's status; fastify's unnamed client errors keep their own. */
    readonly status: number = API_ERRORS[code],
  ) {
    super(message);
  }
}

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

/** The five-field body for a request known by its `requestUri` only (the listener's refusals, a queue's `amqp://<queue>`). */
export function errorBodyAt(code: ApiErrorCode, message: string, requestUri: string, status: number = API_ERRORS[code]): ErrorBody {
  return { status, error: REASONS[status] ?? 'Error', message, errorCode: code, requestUri };
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
  return `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** Sends the five-field body. */
export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type(JSON_TYPE).send(errorBody(request, error.code, error.message, error.status));
}

/** The gateway's 401 (§5, §7): two fields, and a challenge. */
export function sendUnauthorized(reply: FastifyReply, message: string): FastifyReply {
  return reply.code(401).header('www-authenticate', 'Bearer').type(JSON_TYPE).send({ error: REASONS[401], message });
}

/** What the domain and the acceptor throw, as the API answers it. */
const FROM_SMPPD: Partial<Record<SmppdError['code'], ApiErrorCode>> = {
  VALIDATION: 'VALIDATION',
  TEXT_NOT_GSM7: 'TEXT_NOT_GSM7',
  MESSAGE_TOO_LONG: 'MESSAGE_TOO_LONG',
  TEXT_NOT_REPRESENTABLE: 'TEXT_NOT_REPRESENTABLE',
  QUEUE_FULL: 'QUEUE_FULL',
};

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

/** Any thrown value as an ApiError; `internal` is true when it is a bug or a store failure (logged). */
export function toApiError(e: unknown): { error: ApiError; internal: boolean } {
  if (e instanceof ApiError) return { error: e, internal: false };
  if (isSmppdError(e)) {
    const code = FROM_SMPPD[e.code];
    if (code === undefined) return { error: new ApiError('INTERNAL', 'internal error; the smppd log has the details'), internal: true };
    const retry = e.details?.retryAfterSeconds;
    const headers: Record<string, string> = code === 'QUEUE_FULL' ? { 'retry-after': String(typeof retry === 'number' ? Math.max(1, Math.ceil(retry)) : 1) } : {};
    return { error: new ApiError(code, e.message, headers), internal: false };
  }
  const fe = e as Partial<FastifyError> | null;
  const mapped = typeof fe?.code === 'string' ? FROM_FASTIFY[fe.code] : undefined;
  if (mapped !== undefined) return { error: new ApiError(mapped, MESSAGES[mapped] ?? fe?.message ?? mapped), internal: false };
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    // fastify's other client errors keep their status; their messages name no secret.
    return { error: new ApiError('BAD_REQUEST', typeof fe?.message === 'string' ? fe.message : 'bad request', {}, status), internal: false };
  }
  return { error: new ApiError('INTERNAL', 'internal error; the smppd log has the details'), internal: true };
}

/** fastify's error handler: every refusal in the five-field body; unexpected ones logged (never with headers). */
export function errorHandler(log: Log) {
  return (e: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const { error, internal } = toApiError(e);
    if (internal) {
      const err = e instanceof Error ? { name: e.name, message: e.message, stack: e.stack } : { value: String(e) };
      log.error({ event: 'http_internal_error', method: request.method, path: requestPath(request), err }, 'HTTP request failed');
    }
    return sendError(reply, request, error);
  };
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, request, new ApiError('NOT_FOUND', `no route ${request.method} ${requestPath(request)}`));
}
