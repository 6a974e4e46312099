/**
 * The API's refusals (messaging-service-api.md §7), the same for the HTTP API and the queue
 * ingress: every `errorCode` with its status, and the five-field body
 * `{ status, error, message, errorCode, requestUri }` they are answered with. How the HTTP API
 * writes them (and the gateway's two-field 401) is ingress/http/error-replies.ts.
 *
 * `errorCode` values are stable: clients branch on them after the status, so never rename one.
 * Messages are for people and never carry a token or a header.
 */
import { isSmppdError, type SmppdError } from '../core/errors.js';

/** Every `errorCode` the API answers, over HTTP or on the queue, with its status. README lists them. */
export const API_ERRORS = {
  /** A field is missing, unknown, of the wrong type, or breaks its rule (number format, time in the past, …). */
  VALIDATION: 400,
  /** The body is not valid JSON (sendSms, identify, send-now; bulkRequest inside sendbulk). */
  INVALID_JSON: 400,
  /** sendbulk: a part missing, unknown or given twice, or a malformed multipart body. */
  INVALID_MULTIPART: 400,
  /** messageType TEXT with characters outside GSM 03.38; the message names them. */
  TEXT_NOT_GSM7: 400,
  /** The text needs more parts than the upstream's maxParts. */
  MESSAGE_TOO_LONG: 400,
  /** Characters the upstream's default alphabet (latin1, ascii) cannot carry. */
  TEXT_NOT_REPRESENTABLE: 400,
  /** No route (`routes` in the config) takes this destination number for this client: nothing was stored. */
  NO_ROUTE: 400,
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
  /** The admin API (/admin): no admin token (or session), or one nobody has; /mcp: no client token, or one nobody has. A WWW-Authenticate header says Bearer. */
  UNAUTHORIZED: 401,
  /** The admin API (/admin): a client's token, which is no admin's; or a signed-in page's change without its CSRF proof. */
  FORBIDDEN: 403,
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
  /** No such path. */
  NOT_FOUND: 404,
  /** A known path with another method; an Allow header lists the methods it takes. */
  METHOD_NOT_ALLOWED: 405,
  /** The admin API: no upstream of this name in the configuration. */
  UNKNOWN_UPSTREAM: 404,
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
  /**
   * A body with a Content-Type the endpoint does not take, or with none: JSON endpoints take
   * application/json, sendbulk multipart/form-data.
   */
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
  /**
   * The request's Idempotency-Key (or, on the queue, its messageId or reference) was used before
   * with another request (another body or endpoint) within its lifetime: nothing was done.
   */
  IDEMPOTENCY_KEY_REUSED: 422,
  /**
   * The request with this Idempotency-Key is still running on another instance after two minutes
   * of waiting for it; a Retry-After header says when to ask again.
   */
  IDEMPOTENCY_KEY_IN_USE: 409,
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
  406: 'Not Acceptable', 408: 'Request Timeout', 409: 'Conflict', 411: 'Length Required', 413: 'Payload Too Large', 415: 'Unsupported Media Type',
  417: 'Expectation Failed', 422: 'Unprocessable Content', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
};

/** The five-field error body (§7); responses.ts's errorBodySchema describes it, and is held to it. */
export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  errorCode: ApiErrorCode;
  requestUri: string;
}

/** A refusal the checks and routes throw; each ingress renders it as the five-field body. */
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

/** The five-field body for a request known by its `requestUri` only (the listener's refusals, a queue's `amqp://<queue>`). */
export function errorBodyAt(code: ApiErrorCode, message: string, requestUri: string, status: number = API_ERRORS[code]): ErrorBody {
  return { status, error: reasonPhrase(status), message, errorCode: code, requestUri };
}

/** What the domain and the acceptor throw, as the API answers it. */
const FROM_SMPPD: Partial<Record<SmppdError['code'], ApiErrorCode>> = {
  VALIDATION: 'VALIDATION',
  TEXT_NOT_GSM7: 'TEXT_NOT_GSM7',
  MESSAGE_TOO_LONG: 'MESSAGE_TOO_LONG',
  TEXT_NOT_REPRESENTABLE: 'TEXT_NOT_REPRESENTABLE',
  QUEUE_FULL: 'QUEUE_FULL',
  NO_ROUTE: 'NO_ROUTE',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
};

/**
 * Any thrown value as an ApiError; `internal` is true when it is a bug or a store failure
 * (logged by the caller).
 */
export function toApiError(e: unknown): { error: ApiError; internal: boolean } {
  if (e instanceof ApiError) return { error: e, internal: false };
  if (isSmppdError(e)) {
    const code = FROM_SMPPD[e.code];
    if (code === undefined) return { error: internalError(), internal: true };
    const retry = e.details?.retryAfterSeconds;
    const headers: Record<string, string> = code === 'QUEUE_FULL' || code === 'IDEMPOTENCY_KEY_IN_USE'
      ? { 'retry-after': String(typeof retry === 'number' ? Math.max(1, Math.ceil(retry)) : 1) } : {};
    return { error: new ApiError(code, e.message, headers), internal: false };
  }
  return { error: internalError(), internal: true };
}

function internalError(): ApiError {
  return new ApiError('INTERNAL', 'internal error; the smppd log has the details');
}

/** The reason phrase of an API status (RFC 9110); `Error` for one the API does not use. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Error';
}
