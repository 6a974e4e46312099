/** Stable error codes: operators and other tools branch on these, so never rename one. */
export const ErrorCode = {
  CONFIG_INVALID: 'CONFIG_INVALID',
  CONFIG_UNREADABLE: 'CONFIG_UNREADABLE',
  PDU_MALFORMED: 'PDU_MALFORMED',
  PDU_TOO_LONG: 'PDU_TOO_LONG',
  /**
   * A field of a PDU to send breaks SMPP v3.4: a C-Octet String with a NUL, a character past
   * U+00FF or more characters than the field holds; a time not of the form YYMMDDhhmmsstnnp; a
   * short_message over 254 octets. Nothing was written.
   */
  PDU_FIELD_INVALID: 'PDU_FIELD_INVALID',
  CONNECTION_CLOSED: 'CONNECTION_CLOSED',
  BIND_FAILED: 'BIND_FAILED',
  BIND_CREDENTIALS: 'BIND_CREDENTIALS',
  RESPONSE_TIMEOUT: 'RESPONSE_TIMEOUT',
  POOL_STOPPED: 'POOL_STOPPED',
  POOL_FULL: 'POOL_FULL',
  UNKNOWN_UPSTREAM: 'UNKNOWN_UPSTREAM',
  /** A request that breaks a rule of the API (a field, a number format). */
  VALIDATION: 'VALIDATION',
  /** More queued work than limits.maxQueued: retry later (429). */
  QUEUE_FULL: 'QUEUE_FULL',
  /** messageType TEXT with characters outside GSM 03.38; the message names them. */
  TEXT_NOT_GSM7: 'TEXT_NOT_GSM7',
  /** More parts than the upstream's maxParts. */
  MESSAGE_TOO_LONG: 'MESSAGE_TOO_LONG',
  /** Characters the upstream's default alphabet (latin1, ascii) cannot carry. */
  TEXT_NOT_REPRESENTABLE: 'TEXT_NOT_REPRESENTABLE',
  /** No route (`routes[]`) matches the destination for the client: nothing was stored. */
  NO_ROUTE: 'NO_ROUTE',
  /** A batch or schedule asked for a state change its current state does not allow ('only active batches can be paused'). */
  INVALID_STATE_TRANSITION: 'INVALID_STATE_TRANSITION',
  /** Messages appended to a batch that does not exist (for this client). */
  BATCH_NOT_FOUND: 'BATCH_NOT_FOUND',
  /** An idempotency key used again with another request (another body, another endpoint): nothing was done. */
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  /**
   * An idempotency key recorded by another request: the store refused to record it again
   * (nothing of the write was stored), or that request is still running after the wait for it.
   */
  IDEMPOTENCY_KEY_IN_USE: 'IDEMPOTENCY_KEY_IN_USE',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The one error class of smppd. `code` is stable; `message` is for people. */
export class SmppdError extends Error {
  override readonly name = 'SmppdError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isSmppdError(e: unknown, code?: ErrorCode): e is SmppdError {
  return e instanceof SmppdError && (code === undefined || e.code === code);
}
