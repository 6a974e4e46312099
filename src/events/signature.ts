/**
 * Webhook signatures, in the shape Stripe uses, so a receiver can reject forged or replayed
 * events: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. Signing the timestamp
 * with the body is what makes an old request useless to replay once it is outside the tolerance.
 * More than one `v1` may appear (a sender rolling its secret signs with both).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode, SmppdError } from '../core/errors.js';

/** The request header that carries the signature. */
export const SIGNATURE_HEADER = 'x-smppd-signature';

/** How far the signed timestamp may be from the receiver's clock, seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SIGNATURE_BYTES = 32;
const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^\d{1,15}$/;

/** `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256(secret, `${t}.${body}`)>`; `timestampSeconds` is a non-negative integer. */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new SmppdError(ErrorCode.INTERNAL, 'a signature timestamp is a non-negative integer of seconds');
  }
  return `t=${timestampSeconds},v1=${sign(secret, timestampSeconds, body).toString('hex')}`;
}

/**
 * Verifies a header made by `signatureHeader`: true when some `v1` matches (constant-time
 * compare) and |now - t| <= `toleranceSeconds` (default 300). Never throws on a malformed
 * header: it is false.
 */
export function verifySignature(
  secret: string,
  header: string,
  body: string,
  nowSeconds: number,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): boolean {
  const parsed = parseHeader(header);
  if (!parsed) return false;
  if (!(Math.abs(nowSeconds - parsed.t) <= toleranceSeconds)) return false;
  const expected = sign(secret, parsed.t, body);
  let matched = false;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (const candidate of parsed.v1) {
    if (timingSafeEqual(expected, candidate)) matched = true;
  }
  return matched;
}

function sign(secret: string, timestampSeconds: number, body: string): Buffer {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`, 'utf8').digest();
}

/** One `t` and at least one well-formed `v1`; other schemes (`v0=…`) are ignored, as Stripe's are. */
function parseHeader(header: unknown): { t: number; v1: Buffer[] } | undefined {
  if (typeof header !== 'string') return undefined;
  let t: number | undefined;
  const v1: Buffer[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !UNIX_SECONDS.test(value)) return undefined;
      t = Number(value);
    } else if (key === 'v1' && HEX_SIGNATURE.test(value)) {
      const bytes = Buffer.from(value, 'hex');
      if (bytes.length === SIGNATURE_BYTES) v1.push(bytes);
    }
  }
  return t === undefined || v1.length === 0 ? undefined : { t, v1 };
}
