/**
 * The `http` section: the local HTTP API's listener (address, timeouts, connections, TLS) and the
 * limits of what one request may hold (body, upload, numbers, resend range, uploads at once).
 * load.ts splits `listen` and reads the TLS files (`HttpConfig`).
 */
import { z } from 'zod';
import { flag, nonEmpty, secondsFrom, wholeNumber } from './schema-parts.js';

/** `host:port`, `[v6]:port`; port 0 asks the system for a free one (tests). */
const LISTEN = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/;

/** Splits `http.listen`; null when it is not `host:port` with a port of 0–65535. */
export function parseListen(listen: string): { host: string; port: number } | null {
  const m = LISTEN.exec(listen);
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  return { host: m[1] ?? m[2] ?? '', port };
}

const MIB = 1024 * 1024;
/** http.maxResendDays' default: a week's outage of a client's receiver re-pushed in one request. */
export const MAX_RESEND_DAYS = 7;
/**
 * http.idempotencyHours' default: a day covers a client's retries across a night's outage of its
 * own or of smppd's, as the draft's authors' examples keep keys for 24 hours.
 */
export const IDEMPOTENCY_HOURS = 24;
/**
 * http.maxConcurrentUploads' default: with http.maxBulkNumbers' default, uploads hold at most
 * 16 × 1,000,000 × 16 bytes = 256 MB of numbers at once, and an application may upload eight
 * lists side by side (one client may hold half) while another still finds a slot.
 */
export const MAX_CONCURRENT_UPLOADS = 16;

/**
 * The HTTP listener's limits by default, in seconds and connections (the schema's defaults; the
 * HTTP layer falls back on them when built without a configuration, as in tests).
 */
export const HTTP_LISTENER_DEFAULTS = {
  headersTimeoutSeconds: 10,
  requestTimeoutSeconds: 30,
  bulkRequestTimeoutSeconds: 600,
  keepAliveTimeoutSeconds: 5,
  maxConnections: 1000,
  maxConnectionsPerAddress: 0,
} as const;

/**
 * TLS on the API listener, so tokens do not cross a network in clear. Files are PEM, relative to
 * the config file's folder; load.ts reads them and checks that they make a usable server context.
 */
const httpTlsSchema = z.strictObject({
  /** Required. The server certificate, then any intermediate certificates (the chain clients get). */
  cert: nonEmpty(),
  /** Required. The private key of cert. */
  key: nonEmpty(),
  /** The CA(s) a client certificate must be signed by. Required with requestClientCert, meaningless without it. */
  ca: nonEmpty().optional(),
  /**
   * true: every client must present a certificate signed by ca, or the TLS handshake fails
   * (required, not merely requested: an optional certificate would protect nothing). The bearer
   * token is still required: the certificate admits a machine, the token names the client. Default false.
   */
  requestClientCert: flag().default(false),
}, { error: 'must be a mapping { cert, key, ca?, requestClientCert? }' }).superRefine((t, ctx) => {
  if (t.requestClientCert && t.ca === undefined) {
    ctx.addIssue({ code: 'custom', path: ['ca'], message: 'is required with requestClientCert: true (the CA that signs client certificates)' });
  } else if (!t.requestClientCert && t.ca !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['ca'], message: 'only verifies client certificates: set requestClientCert: true, or leave ca out (intermediate certificates go in cert)' });
  }
});

/** The local HTTP API (the provider's SMS REST API, mirrored). */
export const httpSchema = z.strictObject({
  /** Address to listen on, `host:port` (IPv6 in brackets). Default 127.0.0.1:8080. */
  listen: nonEmpty().refine((l) => parseListen(l) !== null, { error: 'must be host:port, e.g. 127.0.0.1:8080 or [::1]:8080, with a port of 0–65535' })
    .default('127.0.0.1:8080'),
  /** Largest JSON body, bytes. Default 1 MiB. 1 KiB–64 MiB. Larger: 413. */
  maxBodyBytes: wholeNumber(1024, 64 * MIB).default(MIB),
  /** Largest sendbulk number file, bytes. Default 50 MiB. 1 KiB–4 GiB. Larger: 413. */
  maxUploadBytes: wholeNumber(1024, 4096 * MIB).default(50 * MIB),
  /**
   * Numbers one sendbulk file may hold (valid ones, repeats included): each is held in memory
   * (16 bytes) until the upload is counted and stored. Default 1000000. 1–50000000. More: 413.
   */
  maxBulkNumbers: wholeNumber(1, 50_000_000).default(1_000_000),
  /**
   * sendbulk uploads read, counted and stored at once, all clients; one client may have half of
   * them (at least 1). Their numbers are held in memory until stored: at most maxConcurrentUploads
   * × maxBulkNumbers × 16 bytes in all. Default 4. 1–1000. More: 429 TOO_MANY_UPLOADS.
   */
  maxConcurrentUploads: wholeNumber(1, 1000).default(MAX_CONCURRENT_UPLOADS),
  /**
   * Longest date range of one POST /sms/resendDlr, days (startDate's first instant to endDate's
   * last). Default 7. 1–366. Longer: 400. One request queues an event per message of the range.
   */
  maxResendDays: wholeNumber(1, 366).default(MAX_RESEND_DAYS),
  /**
   * Hours an Idempotency-Key of sendSms and sendbulk is kept: a repeat of the request with the
   * same key within them is answered what the first was answered (the same message id, the same
   * sendbulk response), one with another body 422. Default 24. 1–168. Kept in the store; expired
   * keys are deleted by the retention sweep (none with store.retentionDays 0).
   */
  idempotencyHours: wholeNumber(1, 168).default(IDEMPOTENCY_HOURS),
  /**
   * Seconds from a request's first byte (a new connection's opening) to the end of its headers.
   * Default 10. 1–300. Late: 408 and the connection closed. With tls the clock starts once the
   * handshake is done, and the handshake itself has as long again (Node's handshakeTimeout; a
   * handshake not done by then is closed without an answer): a TLS client may take up to twice
   * this from connecting to the end of its headers.
   */
  headersTimeoutSeconds: secondsFrom(1, 300).default(HTTP_LISTENER_DEFAULTS.headersTimeoutSeconds),
  /**
   * Seconds from the end of a request's headers to the end of its body, every route but sendbulk.
   * Default 30. 1–3600. Late: 408 and the connection closed. A client has as long again to take
   * (read) a response once smppd has written it; then its connection is closed.
   */
  requestTimeoutSeconds: secondsFrom(1, 3600).default(HTTP_LISTENER_DEFAULTS.requestTimeoutSeconds),
  /**
   * The same for sendbulk, whose file is read whole before its numbers are stored. Default 600. 1–86400;
   * ≥ requestTimeoutSeconds.
   */
  bulkRequestTimeoutSeconds: secondsFrom(1, 86_400).default(HTTP_LISTENER_DEFAULTS.bulkRequestTimeoutSeconds),
  /** Seconds an idle keep-alive connection is kept after a response. Default 5. 1–600. */
  keepAliveTimeoutSeconds: secondsFrom(1, 600).default(HTTP_LISTENER_DEFAULTS.keepAliveTimeoutSeconds),
  /**
   * Open connections at most, idle keep-alive ones included; a connection past it is closed as
   * soon as it is accepted. Default 1000. 1–1000000. Keep it under the process's open-file limit.
   */
  maxConnections: wholeNumber(1, 1_000_000).default(HTTP_LISTENER_DEFAULTS.maxConnections),
  /**
   * Open connections from one remote IP address at most, idle ones included; one past it is closed
   * as soon as it is accepted, so one client's flood cannot take all of maxConnections. 0: no such
   * cap. Default 0: behind a load balancer or reverse proxy every connection comes from its
   * address, and a cap would count them all as one client. 0–1000000; ≤ maxConnections when set.
   */
  maxConnectionsPerAddress: wholeNumber(0, 1_000_000).default(HTTP_LISTENER_DEFAULTS.maxConnectionsPerAddress),
  /** Default: none (plain HTTP). */
  tls: httpTlsSchema.optional(),
}, { error: 'must be a mapping' }).refine((h) => h.bulkRequestTimeoutSeconds >= h.requestTimeoutSeconds, {
  error: 'must be ≥ requestTimeoutSeconds', path: ['bulkRequestTimeoutSeconds'],
}).refine((h) => h.maxConnectionsPerAddress <= h.maxConnections, {
  error: 'must be ≤ maxConnections (or 0: no cap per address)', path: ['maxConnectionsPerAddress'],
}).default({
  listen: '127.0.0.1:8080', maxBodyBytes: MIB, maxUploadBytes: 50 * MIB, maxBulkNumbers: 1_000_000, maxConcurrentUploads: MAX_CONCURRENT_UPLOADS,
  maxResendDays: MAX_RESEND_DAYS, idempotencyHours: IDEMPOTENCY_HOURS, ...HTTP_LISTENER_DEFAULTS,
});

/** The HTTP section with `listen` split into host and port. */
export interface HttpConfig {
  /** As written: `host:port`. */
  listen: string;
  host: string;
  /** 0–65535; 0: any free port. */
  port: number;
  /** Bytes. */
  maxBodyBytes: number;
  /** Bytes. */
  maxUploadBytes: number;
  /** Days. 1–366. */
  maxResendDays: number;
  /** Hours. 1–168. Default 24. */
  idempotencyHours: number;
  /** Numbers one sendbulk file may hold. Default 1000000. */
  maxBulkNumbers: number;
  /** sendbulk uploads in progress at once; one client at most half (≥ 1). Default 4. 1–1000. */
  maxConcurrentUploads: number;
  /** Seconds (fractions allowed). 1–300. */
  headersTimeoutSeconds: number;
  /** Seconds. 1–3600. */
  requestTimeoutSeconds: number;
  /** Seconds. 1–86400; ≥ requestTimeoutSeconds. */
  bulkRequestTimeoutSeconds: number;
  /** Seconds. 1–600. */
  keepAliveTimeoutSeconds: number;
  /** 1–1000000. */
  maxConnections: number;
  /** 0 (no cap per address) or 1–maxConnections. */
  maxConnectionsPerAddress: number;
  /** Absent: plain HTTP. */
  tls?: HttpTlsConfig;
}

/** `http.tls` with its files read. */
export interface HttpTlsConfig {
  cert: Buffer;
  key: Buffer;
  /** Present exactly when requestClientCert is true (the schema holds this). */
  ca?: Buffer;
  /** true: a client certificate signed by `ca` is required. */
  requestClientCert: boolean;
}
