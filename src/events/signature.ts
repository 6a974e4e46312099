/**
 * Webhook signatures, in the shape Stripe uses, so a receiver can reject forged or replayed
 * events: `t=<unix seconds>,v2=<hex HMAC-SHA256(secret, "<t>.<eventId>.<body>")>`, where the event
 * id is the request's `x-smppd-event-id`. Signing the timestamp makes an old request useless to
 * replay once it is outside the tolerance; signing the event id makes a captured request useless
 * under another id, so a receiver that deduplicates by that id cannot be made to take one body
 * twice. (`v1`, the HMAC of "<t>.<body>" alone, is no longer sent or accepted: it left the id
 * open to change.) More than one `v2` may appear (a sender rolling its secret signs with both).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode, SmppdError } from '../core/errors.js';

/** The request header that carries the signature. */
export const SIGNATURE_HEADER = 'x-smppd-signature';
/** The request header that carries the event id the signature covers (the outbox id). */
export const EVENT_ID_HEADER = 'x-smppd-event-id';

/** How far the signed timestamp may be from the receiver's clock, seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SIGNATURE_BYTES = 32;
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^\d{1,15}$/;
/** Digits only, so "<t>.<eventId>.<body>" reads one way. */
const EVENT_ID = /^\d{1,20}$/;

/**
 * `t=<unix seconds>,v2=<lowercase hex HMAC-SHA256(secret, `${t}.${eventId}.${body}`)>`;
 * `timestampSeconds` is a non-negative integer, `eventId` a non-negative integer (or its digits).
 */
export function signatureHeader(secret: string, timestampSeconds: number, eventId: number | string, body: string): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new SmppdError(ErrorCode.INTERNAL, 'a signature timestamp is a non-negative integer of seconds');
  }
  const id = String(eventId);
  if (!EVENT_ID.test(id)) throw new SmppdError(ErrorCode.INTERNAL, 'a signed event id is a non-negative integer');
  return `t=${timestampSeconds},v2=${sign(secret, timestampSeconds, id, body).toString('hex')}`;
}

/**
 * Verifies a header made by `signatureHeader` for the request's event id (`x-smppd-event-id`,
 * as received): true when some `v2` matches (constant-time compare) and |now - t| <=
 * `toleranceSeconds` (default 300). Never throws on a malformed header or id: it is false.
 */
export function verifySignature(
  secret: string,
  header: string,
  eventId: string,
  body: string,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const parsed = parseHeader(header);
  if (!parsed || typeof eventId !== 'string' || !EVENT_ID.test(eventId)) return false;
  if (!(Math.abs(nowSeconds - parsed.t) <= toleranceSeconds)) return false;
  const expected = sign(secret, parsed.t, eventId, body);
  let matched = false;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (const candidate of parsed.v2) {
    if (timingSafeEqual(expected, candidate)) matched = true;
  }
  return matched;
}

function sign(secret: string, timestampSeconds: number, eventId: string, body: string): Buffer {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${eventId}.${body}`, 'utf8').digest();
}

/** One `t` and at least one well-formed `v2`; other schemes (`v1=…`, `v0=…`) are ignored, as Stripe's are. */
function parseHeader(header: unknown): { t: number; v2: Buffer[] } | undefined {
  if (typeof header !== 'string') return undefined;
  let t: number | undefined;
  const v2: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !UNIX_SECONDS.test(value)) return undefined;
      t = Number(value);
    } else if (key === 'v2' && HEX_SIGNATURE.test(value)) {
      const bytes = Buffer.from(value, 'hex');
      if (bytes.length === SIGNATURE_BYTES) v2.push(bytes);
    }
  }
  return t === undefined || v2.length === 0 ? undefined : { t, v2 };
}
