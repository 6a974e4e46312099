/** The schema of one client of the HTTP API: its token, sender IDs, webhook, inbound numbers and rate limit. */
import { z } from 'zod';
import { checkSenderId } from '../sms/sender-id.js';
import { backoff, flag, nonEmpty, positive, seconds, typeMessage, wholeNumber } from './schema-parts.js';

/** Bearer tokens shorter than this are refused: a short token can be guessed. */
export const TOKEN_MIN = 16;
const CLIENT_NAME = /^[A-Za-z0-9_.@-]{1,64}$/;
/** SMPP v3.4 §5.2.9: destination_addr is at most 21 octets with its NUL. Digits only, as the SMSC sends them. */
const INBOUND_NUMBER = /^\d{1,20}$/;
const WEBHOOK_URL_MESSAGE = 'must be an absolute https:// URL';

/** The URL, or null when `url` is not an absolute URL. */
function parseUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * Where a client's events (receipts, inbound messages) are POSTed. Messages about `url` never
 * quote it: a webhook URL often carries a token.
 */
const webhookSchema = z.strictObject({
  /** Required. Absolute https:// URL (http:// only with allowHttp), no #fragment. */
  url: z.string({ error: typeMessage('a string') }).superRefine((url, ctx) => {
    const parsed = parseUrl(url);
    if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) ctx.addIssue({ code: 'custom', message: WEBHOOK_URL_MESSAGE });
    else if (url.includes('#')) ctx.addIssue({ code: 'custom', message: 'must not have a #fragment' });
  }),
  /** HMAC key for signing each request. At most one of secret and secretFile; at least 16 characters. Default: unsigned. */
  secret: z.string({ error: typeMessage('a string') }).min(TOKEN_MIN, { error: `must be at least ${TOKEN_MIN} characters` }).optional(),
  /** A file holding the secret; one trailing newline is trimmed. Relative to the config file. */
  secretFile: nonEmpty().optional(),
  /** Default false: an http:// url is refused, so events and signatures never cross the network in clear by accident. */
  allowHttp: flag().default(false),
  /** Seconds one attempt may take. Default 10. > 0. */
  timeoutSeconds: seconds().default(10),
  /** Requests in flight to this URL. Default 16. 1–1000. */
  concurrency: wholeNumber(1, 1000).default(16),
  /** Backoff between attempts, full jitter below the ceiling, seconds. Default 1 … 300. */
  retry: backoff(1, 300),
  /** Hours after it was queued that a still-failing event is parked as dead. Default 24. > 0. */
  maxAgeHours: positive(' of hours').default(24),
  /** PEM file of CAs trusted for an https url besides Node's bundled ones. Certificates are always verified. */
  ca: nonEmpty().optional(),
}, { error: 'must be a mapping { url, secret or secretFile, allowHttp, timeoutSeconds, concurrency, retry, maxAgeHours, ca }' }).superRefine((w, ctx) => {
  if (w.secret !== undefined && w.secretFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['secret'], message: 'give secret or secretFile, not both' });
  }
  if (!w.allowHttp && parseUrl(w.url)?.protocol === 'http:') {
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an https:// URL; set allowHttp: true to allow http://' });
  }
});

/** One configured sender ID: a string a submit_sm can carry (sms/sender-id.ts). */
const senderId = z.string({ error: typeMessage('a string') }).superRefine((id, ctx) => {
  const checked = checkSenderId(id);
  if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.problem });
});

/** Most sends per second a client may be given (1,000 binds at the provider's 1,000/s each). */
export const RATE_LIMIT_MAX = 1_000_000;

const PER_SECOND = 'a number of sends per second > 0';

/** The burst a rate limit gets when none is set: one second's worth, at least 1. */
export function defaultRateBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}

/**
 * A token bucket on the client's send requests, shared by both ingresses: a sendSms, a sendbulk
 * and a queue message each cost one token. Past it: 429 RATE_LIMITED over HTTP; a queue message
 * waits in the client's wait queue.
 */
const rateLimitSchema = z.strictObject({
  /** Required. Tokens added per second (fractions allowed: 0.5 is one send every 2 s). > 0, at most 1,000,000. */
  perSecond: z.number({ error: typeMessage(PER_SECOND) }).positive({ error: `must be ${PER_SECOND}` }).max(RATE_LIMIT_MAX, { error: `must be at most ${RATE_LIMIT_MAX}` }),
  /** Tokens saved up at most: sends that may come at once after a quiet spell. Default ceil(perSecond), at least 1. 1–1,000,000. */
  burst: wholeNumber(1, RATE_LIMIT_MAX).optional(),
}, { error: 'must be a mapping { perSecond, burst }' }).transform((r) => ({ perSecond: r.perSecond, burst: r.burst ?? defaultRateBurst(r.perSecond) }));

/** One caller of the HTTP API: a bearer token and the sender IDs it may use. */
export const clientSchema = z.strictObject({
  /** Required. 1–64 of A-Z a-z 0-9 _ . @ - ; unique among clients. Stored with its messages. */
  name: z.string({ error: typeMessage('a string') }).regex(CLIENT_NAME, { error: 'must be 1–64 letters, digits, _ . @ or -' }),
  /** Exactly one of token and tokenFile. At least 16 characters; unique among clients. */
  token: z.string({ error: typeMessage('a string') }).min(TOKEN_MIN, { error: `must be at least ${TOKEN_MIN} characters` }).optional(),
  /** A file holding the token; one trailing newline is trimmed. Relative to the config file. */
  tokenFile: nonEmpty().optional(),
  /**
   * Sender IDs this client may use (403 otherwise). Default: any. Each follows the sender ID rule
   * of sms/sender-id.ts: one no network carries could never be sent, so it is a config error.
   */
  senders: z.array(senderId, { error: 'must be a list of sender IDs' })
    .min(1, { error: 'must list at least one sender ID; leave senders out to allow any' }).optional(),
  /** Where this client's events go. Default: none; the client gets no events. */
  webhook: webhookSchema.optional(),
  /** Inbound (MO) messages to these destination numbers go to this client. Digits only; each number in one client at most. */
  inboundNumbers: z.array(
    z.string({ error: typeMessage('a string') }).regex(INBOUND_NUMBER, { error: 'must be digits only, 1–20 of them (no + or spaces)' }),
    { error: 'must be a list of numbers, e.g. ["447700900123"]' },
  ).min(1, { error: 'must list at least one number; leave inboundNumbers out for none' }).optional(),
  /** Send requests per second, over HTTP and the queue together. Default: none (unlimited). */
  rateLimit: rateLimitSchema.optional(),
  /**
   * This client's queued parts, at most, beside limits.maxQueued: a send or a sendbulk upload
   * that would pass it is refused with 429 QUEUE_FULL, and other clients are not. 1–1000000000.
   * Default: none (only limits.maxQueued).
   */
  maxQueued: wholeNumber(1, 1_000_000_000).optional(),
  /**
   * This client's share of the binds against the others' while they all have messages waiting:
   * weight 3 has three sent for each one of weight 1. Default 1. 1–1000.
   */
  weight: wholeNumber(1, 1000).default(1),
}, { error: 'must be a mapping { name, token or tokenFile, senders, webhook, inboundNumbers, rateLimit, maxQueued, weight }' }).superRefine((c, ctx) => {
  if (c.token !== undefined && c.tokenFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'give token or tokenFile, not both' });
  } else if (c.token === undefined && c.tokenFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'one of token or tokenFile is required' });
  }
});
