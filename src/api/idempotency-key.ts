/**
 * The `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header): its rule, and
 * the fingerprint of a request that a repeat with the same key must match. The draft makes the
 * header a Structured Field String (RFC 8941 §3.3.3: printable ASCII in double quotes); clients
 * commonly send the value bare (`Idempotency-Key: 8e03978e-…`), and both are taken.
 */
import { createHash, type Hash } from 'node:crypto';
import { ApiError } from './errors.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Characters a key has at most. */
export const IDEMPOTENCY_KEY_MAX = 255;
/** The rule, as the refusals, the README and /openapi.json say it. */
export const IDEMPOTENCY_KEY_RULE = `1–${IDEMPOTENCY_KEY_MAX} printable ASCII characters (U+0020–U+007E), bare or in double quotes (the draft's Structured Field String, whose \\" and \\\\ escapes are read)`;

const PRINTABLE = /^[\x20-\x7e]*$/;

/** The key a request names, or undefined without the header; throws VALIDATION (400) naming the header for one that breaks the rule. */
export function idempotencyKeyOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw refused('is given more than once');
  const key = value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? unquote(value.slice(1, -1)) : value;
  if (key.length === 0) throw refused('is empty');
  if (key.length > IDEMPOTENCY_KEY_MAX) throw refused(`is ${key.length} characters long`);
  if (!PRINTABLE.test(key)) throw refused('holds a character outside printable ASCII');
  return key;
}

/** An sf-string's content: `\"` and `\\` are its only escapes (RFC 8941 §3.3.3). */
function unquote(inner: string): string {
  let out = '';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '"') throw refused('holds an unescaped double quote inside its quotes');
    if (c !== '\\') {
      out += c;
      continue;
    }
    const next = inner[++i];
    if (next !== '"' && next !== '\\') throw refused('holds a backslash that escapes neither " nor \\ inside its quotes');
    out += next;
  }
  return out;
}

function refused(problem: string): ApiError {
  return new ApiError('VALIDATION', `Idempotency-Key: ${problem}; a key is ${IDEMPOTENCY_KEY_RULE}`);
}

/**
 * JSON with every object's keys in code-unit order, at every depth: two bodies that differ only
 * in the order of their fields, or in white space, are the same request.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
  }) ?? 'null';
}

/** A request's fingerprint, built as it is read (a sendbulk file's bytes as they arrive): its endpoint, then each piece. */
export class RequestFingerprint {
  readonly #hash: Hash;

  constructor(endpoint: string) {
    this.#hash = createHash('sha256').update(endpoint).update('\n');
  }

  /** A parsed JSON body or field, canonical. */
  json(value: unknown): this {
    this.#hash.update(canonicalJson(value)).update('\n');
    return this;
  }

  /** Raw bytes, as they arrive. */
  bytes(chunk: Buffer | string): this {
    this.#hash.update(chunk);
    return this;
  }

  /** The hex digest; once. */
  digest(): string {
    return this.#hash.digest('hex');
  }
}
