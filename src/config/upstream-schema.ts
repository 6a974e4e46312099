/** The schema of one upstream (an SMSC account): connection, TLS, binds, pacing, retries, text and receipts. */
import { z } from 'zod';
import { isValidTimeZone } from '../core/time-zone.js';
import { REGULATORY_FIELDS, VENDOR_TLV_MAX, VENDOR_TLV_MIN, type RegulatoryField } from '../sms/regulatory.js';
import { DEFAULT_SOURCE_ADDRESSING, type TonNpi } from '../sms/sender-id.js';
import { atLeastZero, backoff, between, cOctets, flag, nonEmpty, oneOf, positive, seconds, typeMessage, wholeNumber } from './schema-parts.js';

export const BIND_MODES = ['transceiver', 'transmitter', 'receiver'] as const;
export const STATUS_CLASSES = ['ok', 'retry', 'reject', 'fail'] as const;
export const DEFAULT_ALPHABETS = ['gsm7', 'latin1', 'ascii'] as const;
export const LONG_MESSAGE_MODES = ['udh', 'sar', 'payload'] as const;
export const RECEIPT_ID_FORMATS = ['auto', 'same', 'hex', 'decimal'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

// SMPP v3.4 §5.2: system_id 16, password 9, system_type 13, address_range 41 octets, each with the NUL.
export const SYSTEM_ID_MAX = 15;
export const PASSWORD_MAX = 8;
const SYSTEM_TYPE_MAX = 12;
const ADDRESS_RANGE_MAX = 40;

/** `maxPendingDeliveries` when the file leaves it out: far more than an SMSC's own window of deliver_sm. */
export const MAX_PENDING_DELIVERIES_DEFAULT = 1_000;

/** `parkedReceipts` when the file leaves it out: ample for receipts that overtake their response, bounded for those that never match. */
export const PARKED_RECEIPTS_DEFAULTS = { max: 50_000, maxAgeSeconds: 3_600 } as const;

const STATUS_CODE_KEY = /^(0[xX][0-9a-fA-F]{1,8}|\d{1,10})$/;
const UPSTREAM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** TLS to the SMSC. File paths here; load.ts reads them into Buffers (`TlsConfig`). */
const tlsSchema = z.strictObject({
  /** PEM file of the CA(s) that sign the SMSC's certificate. Default: Node's bundled CAs. */
  ca: nonEmpty().optional(),
  /** PEM client certificate file, for mutual TLS. Goes with `key`. */
  cert: nonEmpty().optional(),
  /** PEM private key file of `cert`. Goes with `cert`. */
  key: nonEmpty().optional(),
  /** Name the certificate must carry (and SNI). Default: `host`. */
  servername: nonEmpty().optional(),
  /** Default true. false accepts any certificate: lab use only. */
  rejectUnauthorized: flag().default(true),
}, { error: 'must be false or a mapping { ca, cert, key, servername, rejectUnauthorized }' }).superRefine((t, ctx) => {
  if (t.cert !== undefined && t.key === undefined) ctx.addIssue({ code: 'custom', path: ['key'], message: 'is required with cert' });
  if (t.key !== undefined && t.cert === undefined) ctx.addIssue({ code: 'custom', path: ['cert'], message: 'is required with key' });
});

/** One kind's source_addr_ton/npi; either may be left out for the kind's default. */
function tonNpi(d: TonNpi) {
  return z.strictObject({ ton: wholeNumber(0, 255).default(d.ton), npi: wholeNumber(0, 255).default(d.npi) }, { error: 'must be a mapping { ton, npi }' })
    .default({ ton: d.ton, npi: d.npi });
}

/**
 * source_addr_ton/npi of a submit_sm by the kind of its sender ID (sms/sender-id.ts). Defaults:
 * alphanumeric 5/0, international 1/1, shortCode 3/0. Read when a message is accepted and
 * stored with it: a change applies to messages accepted after the restart.
 */
const sourceAddressSchema = z.strictObject({
  alphanumeric: tonNpi(DEFAULT_SOURCE_ADDRESSING.alphanumeric),
  international: tonNpi(DEFAULT_SOURCE_ADDRESSING.international),
  shortCode: tonNpi(DEFAULT_SOURCE_ADDRESSING.shortCode),
}, { error: 'must be a mapping { alphanumeric, international, shortCode }, each { ton, npi }' }).default({
  alphanumeric: { ...DEFAULT_SOURCE_ADDRESSING.alphanumeric },
  international: { ...DEFAULT_SOURCE_ADDRESSING.international },
  shortCode: { ...DEFAULT_SOURCE_ADDRESSING.shortCode },
});

/** Per-upstream classes for command_status codes: `{ "0x400": retry }` → `{ 1024: 'retry' }`. */
const commandStatusSchema = z.record(
  z.string().regex(STATUS_CODE_KEY, { error: 'must be a command_status code, hex (0x400) or decimal (1024)' }),
  oneOf(STATUS_CLASSES),
  { error: 'must be a mapping of command_status codes to ok, retry, reject or fail' },
).superRefine((table, ctx) => {
  const seen = new Map<number, string>();
  for (const key of Object.keys(table)) {
    const code = Number(key);
    if (code > 0xffff_ffff) ctx.addIssue({ code: 'custom', path: [key], message: 'must be at most 0xFFFFFFFF (command_status is 32 bits)' });
    const first = seen.get(code);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `is the same code as ${first}` });
    else seen.set(code, key);
  }
}).transform((table) => {
  const byCode: Record<number, StatusClass> = {};
  for (const [key, cls] of Object.entries(table)) byCode[Number(key)] = cls;
  return byCode;
});

const TAG_ERROR = 'must be a vendor-specific tag from 0x1400 to 0x3FFF (SMPP v3.4 §5.3.2), hex (0x1400) or decimal (5120)';
const TAG_TEXT = /^(0[xX][0-9a-fA-F]{1,4}|\d{1,5})$/;

/** One TLV tag: a YAML integer (hex or decimal), or the same in a string. */
const tlvTag = () => z.union([z.number(), z.string().regex(TAG_TEXT, { error: TAG_ERROR })], { error: TAG_ERROR })
  .transform((t) => Number(t))
  .refine((t) => Number.isInteger(t) && t >= VENDOR_TLV_MIN && t <= VENDOR_TLV_MAX, { error: TAG_ERROR });

/**
 * The tag each regulatory id travels in (sms/regulatory.ts), every key optional; no two fields on
 * one tag (the SMSC could not tell them apart).
 */
const regulatoryTlvsSchema = z.strictObject(
  Object.fromEntries(REGULATORY_FIELDS.map((f) => [f, tlvTag().optional()])) as Record<RegulatoryField, z.ZodOptional<ReturnType<typeof tlvTag>>>,
  { error: 'must be a mapping { peId, templateId, telemarketerId } of TLV tags' },
).superRefine((tags, ctx) => {
  const seen = new Map<number, string>();
  for (const field of REGULATORY_FIELDS) {
    const tag = tags[field];
    if (tag === undefined) continue;
    const first = seen.get(tag);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is the same tag as ${first}: each field needs its own` });
    else seen.set(tag, field);
  }
});

export const upstreamSchema = z.strictObject({
  /** Required. 1–64 of A-Z a-z 0-9 _ . - ; unique among upstreams. */
  name: z.string({ error: typeMessage('a string') }).regex(UPSTREAM_NAME, { error: 'must be 1–64 letters, digits, _ . or -' }),
  /** Required. The SMSC's host name or address. */
  host: nonEmpty(),
  /** Default 2775. 1–65535. */
  port: wholeNumber(1, 65535).default(2775),
  /** Default false (plain TCP); a mapping turns TLS on. */
  tls: z.union([z.literal(false), tlsSchema], { error: 'must be false or a mapping { ca, cert, key, servername, rejectUnauthorized }' })
    .default(false),
  /** Required. At most 15 characters (SMPP v3.4 system_id). */
  systemId: cOctets(SYSTEM_ID_MAX, ' (SMPP v3.4 system_id)').min(1, { error: 'must not be empty' }),
  /** Exactly one of password and passwordFile. At most 8 characters (SMPP v3.4). */
  password: cOctets(PASSWORD_MAX, ' (SMPP v3.4 password)').optional(),
  /** A file holding the password; one trailing newline is trimmed. Relative to the config file. */
  passwordFile: nonEmpty().optional(),
  /** Default "". At most 12 characters. */
  systemType: cOctets(SYSTEM_TYPE_MAX, ' (SMPP v3.4 system_type)').default(''),
  /** Default transceiver. */
  bindMode: oneOf(BIND_MODES).default('transceiver'),
  /** Default "". At most 40 characters. */
  addressRange: cOctets(ADDRESS_RANGE_MAX, ' (SMPP v3.4 address_range)').default(''),
  /** Default 0. 0–255. */
  addrTon: wholeNumber(0, 255).default(0),
  /** Default 0. 0–255. */
  addrNpi: wholeNumber(0, 255).default(0),
  /** Sessions to this account. Default 1. 1–64. Throughput scales with binds. */
  binds: wholeNumber(1, 64).default(1),
  /** submit_sm outstanding per bind. Default 100. 1–10000. */
  window: wholeNumber(1, 10_000).default(100),
  /** submit_sm per second per bind. Default 1000. ≥ 0; 0 = unpaced. */
  ratePerBind: atLeastZero().default(1000),
  /** Tokens a bind may save up. Default max(1, ceil(ratePerBind / 50)). ≥ 1. */
  burst: wholeNumber(1, 1_000_000).optional(),
  /** Seconds between our enquire_link. Default 30. > 0. */
  enquireLinkSeconds: seconds().default(30),
  /** Seconds a request may go unanswered. Default 10. > 0. */
  responseTimeoutSeconds: seconds().default(10),
  /** Seconds to connect (TCP and TLS). Default 10. > 0. */
  connectTimeoutSeconds: seconds().default(10),
  /**
   * Seconds this upstream must be unavailable (no bind up, or every bind stopped for bad
   * credentials) before its queued parts move to the next upstream of their route. Default 10. ≥ 0.
   */
  failoverAfterSeconds: atLeastZero().default(10),
  /** A submit_sm whose answer never came (timeout, link lost). Default resend. */
  onUncertain: oneOf(['resend', 'fail'] as const).default('resend'),
  /** Reconnect backoff, seconds. Default 1 … 60. */
  reconnect: backoff(1, 60),
  /**
   * submit_sm per second shared by all binds of this upstream (the account's limit), divided
   * equally among the running instances on one PostgreSQL store. Default 0 = none. ≥ 0.
   */
  accountRate: atLeastZero().default(0),
  /**
   * On ESME_RTHROTTLED / ESME_RMSGQFUL the bind (or the account, when `accountRate` is what held
   * it back) measures what the SMSC accepts for 100 ms, settles `backoffPercent` (default 3,
   * 0.1–50) below it, and climbs back `probePercentPerSecond` (default 1, 0.1–100) of it each
   * second, faster past it; never below `minRatePerBind` (default 10, > 0), never above
   * ratePerBind. `pauseSeconds` (default 0, ≥ 0): a pause before sending again, for SMSCs that
   * want one.
   */
  throttle: z.strictObject({
    pauseSeconds: atLeastZero().default(0),
    minRatePerBind: positive().default(10),
    backoffPercent: between(0.1, 50).default(3),
    probePercentPerSecond: between(0.1, 100).default(1),
    recoverPerSecond: z.never({ error: 'was replaced by probePercentPerSecond (the rate now settles just below what the SMSC accepts)' }).optional(),
  }).default({ pauseSeconds: 0, minRatePerBind: 10, backoffPercent: 3, probePercentPerSecond: 1 }),
  /** Retries of retryable command_status: attempts (default 5, 1–1000) and backoff seconds (1 … 30). */
  retry: z.strictObject({
    maxAttempts: wholeNumber(1, 1000).default(5),
    initialSeconds: seconds().default(1),
    maxSeconds: seconds().default(30),
  }).default({ maxAttempts: 5, initialSeconds: 1, maxSeconds: 30 })
    .refine((r) => r.maxSeconds >= r.initialSeconds, { error: 'must be ≥ initialSeconds', path: ['maxSeconds'] }),
  /** Overrides of the command_status classes. Default {}. */
  commandStatus: commandStatusSchema.default({}),
  /** What this SMSC takes data_coding 0 to mean. Default gsm7 (GSM 03.38, unpacked). */
  defaultAlphabet: oneOf(DEFAULT_ALPHABETS).default('gsm7'),
  /** Use the Turkish, Spanish and Portuguese shift tables when they keep a text GSM-7. Default false. */
  nationalLanguageShift: flag().default(false),
  /** How a long message travels: UDH concatenation, SAR TLVs, or one message_payload. Default udh. */
  longMessages: oneOf(LONG_MESSAGE_MODES).default('udh'),
  /** Concatenation reference size in the UDH: 8 (IE 0x00) or 16 bits (IE 0x08). Default 8. */
  udhReference: z.union([z.literal(8), z.literal(16)], { error: 'must be 8 or 16' }).default(8),
  /** A message of more parts is refused up front. Default 10. 1–255. */
  maxParts: wholeNumber(1, 255).default(10),
  /** How receipts write the submit_sm_resp id. Default auto (learnt from the first receipts). */
  receiptIdFormat: oneOf(RECEIPT_ID_FORMATS).default('auto'),
  /** The zone of the SMSC's receipt dates: UTC, an offset (+04:00) or an IANA name. Default UTC. */
  smscTimeZone: nonEmpty().refine(isValidTimeZone, { error: 'must be UTC, an offset like +04:00, or an IANA zone like Europe/Berlin' }).default('UTC'),
  /** Ask for a final delivery receipt on every part (registered_delivery 1). Default true. */
  requestReceipts: flag().default(true),
  /** source_addr_ton/npi by the kind of sender ID. Default alphanumeric 5/0, international 1/1, shortCode 3/0; each 0–255. */
  sourceAddress: sourceAddressSchema,
  /**
   * Receipts that match no part yet wait ("park") for the submit_sm_resp that gives their part its
   * id: it may be recorded after the receipt arrives (on another bind, or another instance's). At
   * most `max` (default 50000, 1–10000000) per upstream: past it the oldest are dropped and
   * counted (smppd_receipts_parked_dropped_total). Each at most `maxAgeSeconds` (default 3600,
   * 1–604800; at least 2 × responseTimeoutSeconds, and with store kind postgres at least
   * store.leaseSeconds).
   */
  parkedReceipts: z.strictObject({
    max: wholeNumber(1, 10_000_000).default(PARKED_RECEIPTS_DEFAULTS.max),
    maxAgeSeconds: wholeNumber(1, 604_800).default(PARKED_RECEIPTS_DEFAULTS.maxAgeSeconds),
  }, { error: 'must be a mapping { max, maxAgeSeconds }' }).default(PARKED_RECEIPTS_DEFAULTS),
  /**
   * The client (a `clients[].name`) that gets this upstream's inbound messages whose destination
   * is in no client's `inboundNumbers`. Default: none; such messages go to no client.
   */
  inboundClient: nonEmpty().optional(),
  /**
   * deliver_sm and data_sm (receipts, MO messages) each bind is storing at once, at most. Default
   * 1000. 1–100000. Past it the SMSC is answered ESME_RTHROTTLED at once and delivers again later.
   */
  maxPendingDeliveries: wholeNumber(1, 100_000).default(MAX_PENDING_DELIVERIES_DEFAULT),
  /**
   * The TLV tag each regulatory id of a send travels in, on every submit_sm of the message:
   * `{ peId, templateId, telemarketerId }`, each optional, each an integer from 0x1400 to 0x3FFF
   * (vendor-specific, SMPP v3.4 §5.3.2), no two alike; the operator assigns them. Default: none,
   * and a given id is not sent (said once in the log per upstream).
   */
  regulatoryTlvs: regulatoryTlvsSchema.optional(),
  /**
   * Default false. true: a send routed here must give every field `regulatoryTlvs` maps, or it is
   * refused (400 VALIDATION naming the missing fields). Needs `regulatoryTlvs`.
   */
  requireRegulatory: flag().default(false),
}).superRefine((u, ctx) => {
  // A receipt may come before a submit_sm_resp that comes late (within the grace of one more timeout).
  if (u.parkedReceipts.maxAgeSeconds < 2 * u.responseTimeoutSeconds) {
    ctx.addIssue({
      code: 'custom', path: ['parkedReceipts', 'maxAgeSeconds'],
      message: `must be ≥ 2 × responseTimeoutSeconds (${2 * u.responseTimeoutSeconds}): a receipt may come before a late submit_sm_resp`,
    });
  }
  if (u.requireRegulatory && Object.values(u.regulatoryTlvs ?? {}).every((t) => t === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['requireRegulatory'], message: 'needs regulatoryTlvs: the fields it requires are those regulatoryTlvs maps' });
  }
  if (u.password !== undefined && u.passwordFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'give password or passwordFile, not both' });
  } else if (u.password === undefined && u.passwordFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'one of password or passwordFile is required' });
  }
}).transform((u) => ({
  ...u,
  burst: u.burst ?? Math.max(1, Math.ceil(u.ratePerBind / 50)),
}));
