/**
 * The HTTP client of one client's webhook: a keep-alive undici pool to its origin, one POST per
 * event, every result an outcome (never an exception) so the caller decides about retries.
 * Time comes from the injected Clock: the per-attempt timeout is a Clock timer, so tests drive
 * it with a ManualClock.
 */
import { rootCertificates } from 'node:tls';
import { Pool, type Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.js';

export interface WebhookTarget {
  /** https:// (or http:// when the config allowed it). May contain a path and query; no user:password@. */
  url: string;
  /** HMAC secret; without it no signature header is sent. */
  secret?: string;
  /**
   * Milliseconds from `post()` to a complete response (time waiting for a free connection
   * included), after which the attempt is a timeout. > 0.
   */
  timeoutMs: number;
  /** Requests in flight at most (also the pool's connection count). A positive integer. */
  concurrency: number;
  /** Extra trusted CA certificates (PEM) for an https URL signed by a private CA. Certificates are always verified. */
  ca?: Buffer;
}

export type PostFailure = 'status' | 'timeout' | 'network' | 'tls';

export type PostOutcome =
  | { ok: true; status: number; ms: number }
  | { ok: false; failure: 'status'; status: number; ms: number }
  | { ok: false; failure: 'timeout' | 'network' | 'tls'; error: string; ms: number };

export interface WebhookClientDeps {
  clock: Clock;
  /** The user-agent header, e.g. `smppd/0.1.0`. */
  userAgent: string;
}

/**
 * undici's own timers stay as a backstop only: the Clock timer ends an attempt first. They are
 * real time, so they are kept well above any timeout a config would set.
 */
const BACKSTOP_MS = 300_000;
/** A response body is read to its end so the connection is reused; past this many bytes it is cut off (and the connection with it). */
const MAX_DISCARDED_BODY_BYTES = 1024 * 1024;
const MAX_ERROR_CHARS = 200;

/**
 * Node and OpenSSL certificate-verification codes (`X509_V_ERR_*` without the prefix). Besides
 * these, every `ERR_TLS_*` and `ERR_SSL_*` code is a TLS failure.
 */
const TLS_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE', 'UNABLE_TO_DECRYPT_CRL_SIGNATURE', 'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE', 'CRL_SIGNATURE_FAILURE', 'CERT_NOT_YET_VALID', 'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID', 'CRL_HAS_EXPIRED', 'ERROR_IN_CERT_NOT_BEFORE_FIELD', 'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD', 'ERROR_IN_CRL_NEXT_UPDATE_FIELD', 'CERT_CHAIN_TOO_LONG', 'CERT_REVOKED',
  'INVALID_CA', 'PATH_LENGTH_EXCEEDED', 'INVALID_PURPOSE', 'CERT_UNTRUSTED', 'CERT_REJECTED', 'HOSTNAME_MISMATCH',
]);

/** One client's webhook. `post` never rejects; `close` ends what is pending as failures. */
export class WebhookClient {
  /** The URL's origin only (scheme://host[:port]): what may be logged; the path and query may carry a secret token. */
  readonly origin: string;
  readonly #path: string;
  readonly #https: boolean;
  readonly #secret: string | undefined;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #userAgent: string;
  readonly #pool: Pool;
  /** Text that must never reach an error message (the secret, the path and query). */
  readonly #redact: readonly string[];
  /** Ends each pending post as closed; `close` calls them all. */
  readonly #pending = new Set<() => void>();
  #closed = false;

  constructor(target: WebhookTarget, deps: WebhookClientDeps) {
    const url = parseUrl(target.url);
    if (!(target.timeoutMs > 0 && Number.isFinite(target.timeoutMs))) {
      throw new SmppdError(ErrorCode.CONFIG_INVALID, `webhook timeoutMs must be a positive number of milliseconds (got ${target.timeoutMs})`);
    }
    if (!(Number.isSafeInteger(target.concurrency) && target.concurrency > 0)) {
      throw new SmppdError(ErrorCode.CONFIG_INVALID, `webhook concurrency must be a positive integer (got ${target.concurrency})`);
    }
    this.origin = url.origin;
    this.#path = `${url.pathname}${url.search}`;
    this.#https = url.protocol === 'https:';
    this.#secret = target.secret;
    this.#timeoutMs = target.timeoutMs;
    this.#clock = deps.clock;
    this.#userAgent = deps.userAgent;
    this.#redact = secretsOf(url, target.secret);
    this.#pool = new Pool(url.origin, {
      connections: target.concurrency,
      pipelining: 1,
      connectTimeout: Math.max(BACKSTOP_MS, target.timeoutMs),
      headersTimeout: Math.max(BACKSTOP_MS, target.timeoutMs),
      bodyTimeout: Math.max(BACKSTOP_MS, target.timeoutMs),
      connect: {
        // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 cannot turn verification off either.
        rejectUnauthorized: true,
        // Node's `ca` replaces the default roots, so they are listed with the extra ones.
        ...(target.ca ? { ca: [...rootCertificates, target.ca] } : {}),
      },
    });
  }

  /**
   * POSTs `body` (a JSON text, sent byte for byte as given) with content-type, user-agent,
   * `x-smppd-event-id`, `x-smppd-timestamp` (unix seconds of the clock's wall time) and, with a
   * secret, the signature over that timestamp, event id and body. 2xx is ok; a 3xx is not followed.
   */
  post(body: string, eventId: number): Promise<PostOutcome> {
    const started = this.#clock.now();
    const elapsed = (): number => this.#clock.now() - started;
    if (this.#closed) return Promise.resolve(closedOutcome(0));
    return new Promise<PostOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: PostOutcome): void => {
        if (settled) return;
        settled = true;
        this.#pending.delete(abandon);
        timer.cancel();
        resolve(outcome);
      };
      const abandon = (): void => settle(closedOutcome(elapsed()));
      this.#pending.add(abandon);
      // Declared before the request starts: undici may report a failure synchronously.
      const exchange: { abort?: () => void } = {};
      const timer = this.#clock.setTimer(this.#timeoutMs, () => {
        settle({ ok: false, failure: 'timeout', error: `TIMEOUT: no complete response within ${this.#timeoutMs} ms`, ms: elapsed() });
        exchange.abort?.();
      });
      exchange.abort = this.#exchange(body, eventId, {
        status: (status) => settle(status >= 200 && status < 300 ? { ok: true, status, ms: elapsed() } : { ok: false, failure: 'status', status, ms: elapsed() }),
        error: (error) => {
          const { failure, message } = this.#describe(error);
          settle({ ok: false, failure, error: message, ms: elapsed() });
        },
      }).abort;
      // The timer settles the attempt itself rather than waiting for undici to notice the abort:
      // a request still queued for a connection is only aborted once it gets one.
    });
  }

  /** Closes the connections; pending posts end as 'network' failures. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const abandon of [...this.#pending]) abandon();
    await this.#pool.destroy().catch(() => undefined);
  }

  /**
   * One request, on undici's dispatch API: its handler is told of the status, discards the
   * body as it comes and hears the end, with no stream, async iterator or AbortSignal per
   * request (at thousands of events a second those cost a large share of the client's CPU). `done`
   * gets the status once the body has been read to its end (or cut off past the limit).
   */
  #exchange(body: string, eventId: number, done: { status: (status: number) => void; error: (e: unknown) => void }): { abort: () => void } {
    const timestamp = Math.floor(this.#clock.wallNow() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': this.#userAgent,
      [EVENT_ID_HEADER]: String(eventId),
      'x-smppd-timestamp': String(timestamp),
    };
    if (this.#secret !== undefined) headers[SIGNATURE_HEADER] = signatureHeader(this.#secret, timestamp, eventId, body);
    let controller: Dispatcher.DispatchController | undefined;
    let aborted = false;
    let status = 0;
    let read = 0;
    const abortError = (): Error => Object.assign(new Error('the request was aborted'), { code: 'ABORTED' });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (c) => {
        controller = c;
        if (aborted) c.abort(abortError());
      },
      onResponseStart: (_c, statusCode) => {
        status = statusCode;
      },
      onResponseData: (c, chunk) => {
        read += chunk.length;
        if (read > MAX_DISCARDED_BODY_BYTES) {
          // Enough: the status stands, and the connection goes with the rest of the body.
          done.status(status);
          c.abort(abortError());
        }
      },
      onResponseEnd: () => done.status(status),
      onResponseError: (_c, error) => done.error(error),
    };
    try {
      this.#pool.dispatch({ path: this.#path, method: 'POST', headers, body: Buffer.from(body, 'utf8') }, handler);
    } catch (e) {
      done.error(e);
    }
    return {
      abort: () => {
        aborted = true;
        controller?.abort(abortError());
      },
    };
  }

  /** The failure class and a short message (code first) with nothing secret in it. */
  #describe(error: unknown): { failure: 'timeout' | 'network' | 'tls'; message: string } {
    const chain = causeChain(error);
    const tls = chain.find((e) => isTlsCode(e.code, this.#https));
    const coded = tls ?? chain.find((e) => e.code !== undefined) ?? chain[0];
    const code = coded?.code ?? coded?.name ?? 'ERROR';
    const failure = tls ? 'tls' : isUndiciTimeout(code) ? 'timeout' : 'network';
    // OpenSSL messages span lines; one line is what a log wants.
    let text = `${code}: ${(coded?.message ?? '').replace(/\s+/g, ' ').trim() || 'no detail'}`;
    for (const secret of this.#redact) text = text.split(secret).join('[redacted]');
    return { failure, message: text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text };
  }
}

function closedOutcome(ms: number): PostOutcome {
  return { ok: false, failure: 'network', error: 'CLOSED: the webhook client was closed', ms };
}

function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    // Not the URL in the message (nor its TypeError as the cause): it may carry a token.
    throw new SmppdError(ErrorCode.CONFIG_INVALID, 'the webhook url is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SmppdError(ErrorCode.CONFIG_INVALID, `a webhook url is https:// or http:// (got ${url.protocol})`);
  }
  if (url.username !== '' || url.password !== '') {
    // As fetch() does: credentials in a URL are easy to leak and would not be sent anyway.
    throw new SmppdError(ErrorCode.CONFIG_INVALID, `the webhook url of ${url.origin} carries user:password@; put a token in the path or query`);
  }
  return url;
}

/** Longest first, so a longer secret is not half-replaced by a shorter one inside it. */
function secretsOf(url: URL, secret: string | undefined): string[] {
  const found = new Set<string>();
  const add = (s: string | undefined, min = 1): void => {
    if (s !== undefined && s.length >= min) found.add(s);
  };
  add(url.href);
  add(`${url.pathname}${url.search}`, 2);
  add(url.search, 2);
  if (url.pathname !== '/') add(url.pathname, 2);
  // Values as written in the URL and decoded; short ones would blank out ordinary words.
  for (const part of url.search.slice(1).split('&')) add(part.slice(part.indexOf('=') + 1), 4);
  for (const value of url.searchParams.values()) add(value, 4);
  add(secret);
  return [...found].sort((a, b) => b.length - a.length);
}

interface ErrorLike {
  code?: string;
  name?: string;
  message?: string;
}

/** The error and its causes (and the first of an AggregateError's errors), outermost first. */
function causeChain(error: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && chain.length < 8) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    chain.push({
      code: typeof e.code === 'string' ? e.code : undefined,
      name: typeof e.name === 'string' ? e.name : undefined,
      message: typeof e.message === 'string' ? e.message : undefined,
    });
    current = e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined);
  }
  if (chain.length === 0) chain.push({ message: String(error) });
  return chain;
}

function isTlsCode(code: string | undefined, https: boolean): boolean {
  if (code === undefined) return false;
  // EPROTO is what a TLS handshake against a plain-HTTP port or a broken TLS server ends with.
  return TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_') || (https && code === 'EPROTO');
}

/** undici's own timers (the backstops), which are timeouts all the same. */
function isUndiciTimeout(code: string): boolean {
  return code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}
