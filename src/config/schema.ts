/**
 * The configuration's shape, defaults and rules (zod), the types inferred from it, and the
 * formatter that turns problems into one line per key path: `upstreams[0].ratePerBind: must be
 * a number ≥ 0`. Secrets and TLS files are read by load.ts; this file only describes.
 *
 * Messages never quote the offending value: it may be a password.
 */
import { z } from 'zod';
import { isValidTimeZone } from '../core/time-zone.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const BIND_MODES = ['transceiver', 'transmitter', 'receiver'] as const;
export const STATUS_CLASSES = ['ok', 'retry', 'reject', 'fail'] as const;
export const DEFAULT_ALPHABETS = ['gsm7', 'latin1', 'ascii'] as const;
export const LONG_MESSAGE_MODES = ['udh', 'sar', 'payload'] as const;
export const RECEIPT_ID_FORMATS = ['auto', 'same', 'hex', 'decimal'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

// SMPP v3.4 §5.2: system_id 16, password 9, system_type 13, address_range 41 octets, each with the NUL.
const SYSTEM_ID_MAX = 15;
export const PASSWORD_MAX = 8;
const SYSTEM_TYPE_MAX = 12;
const ADDRESS_RANGE_MAX = 40;

const STATUS_CODE_KEY = /^(0[xX][0-9a-fA-F]{1,8}|\d{1,10})$/;
const UPSTREAM_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

// --- building blocks: each carries the one message an operator sees ---

function typeMessage(expected: string) {
  return (issue: { input?: unknown }): string => {
    if (issue.input === undefined || issue.input === null) return 'is required';
    if (expected === 'a string' && (typeof issue.input === 'number' || typeof issue.input === 'boolean')) {
      return 'must be a string: put it in quotes';
    }
    return `must be ${expected}`;
  };
}

/** A string of at most `max` characters (`why` names the limit's origin). */
function text(max: number, why = '') {
  return z.string({ error: typeMessage('a string') }).max(max, { error: `must be at most ${max} characters${why}` });
}

function nonEmpty() {
  return z.string({ error: typeMessage('a string') }).min(1, { error: 'must not be empty' });
}

function wholeNumber(min: number, max: number) {
  const error = `must be a whole number from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

function atLeastZero() {
  return z.number({ error: 'must be a number ≥ 0' }).min(0, { error: 'must be a number ≥ 0' });
}

function positive(unit = '') {
  const error = `must be a number${unit} > 0`;
  return z.number({ error }).positive({ error });
}

const seconds = () => positive(' of seconds');

function oneOf<T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

const flag = () => z.boolean({ error: 'must be true or false' });

// --- sections ---

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

/** Exponential backoff bounds, in seconds. Invariant: maxSeconds ≥ initialSeconds. */
function backoff(initialSeconds: number, maxSeconds: number) {
  return z.strictObject({
    initialSeconds: seconds().default(initialSeconds),
    maxSeconds: seconds().default(maxSeconds),
  }, { error: 'must be a mapping { initialSeconds, maxSeconds }' }).default({ initialSeconds, maxSeconds })
    .refine((b) => b.maxSeconds >= b.initialSeconds, { error: 'must be ≥ initialSeconds', path: ['maxSeconds'] });
}

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

const upstreamSchema = z.strictObject({
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
  systemId: text(SYSTEM_ID_MAX, ' (SMPP v3.4 system_id)').min(1, { error: 'must not be empty' }),
  /** Exactly one of password and passwordFile. At most 8 characters (SMPP v3.4). */
  password: text(PASSWORD_MAX, ' (SMPP v3.4 password)').optional(),
  /** A file holding the password; one trailing newline is trimmed. Relative to the config file. */
  passwordFile: nonEmpty().optional(),
  /** Default "". At most 12 characters. */
  systemType: text(SYSTEM_TYPE_MAX, ' (SMPP v3.4 system_type)').default(''),
  /** Default transceiver. */
  bindMode: oneOf(BIND_MODES).default('transceiver'),
  /** Default "". At most 40 characters. */
  addressRange: text(ADDRESS_RANGE_MAX, ' (SMPP v3.4 address_range)').default(''),
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
  /** A submit_sm whose answer never came (timeout, link lost). Default resend. */
  onUncertain: oneOf(['resend', 'fail'] as const).default('resend'),
  /** Reconnect backoff, seconds. Default 1 … 60. */
  reconnect: backoff(1, 60),
  /**
   * On ESME_RTHROTTLED the bind pauses `pauseSeconds` (default 1, ≥ 0), halves its rate, never
   * below `minRatePerBind` (default 10, > 0), then climbs `recoverPerSecond` (default
   * ceil(ratePerBind / 10), at least 1; > 0) each second back to ratePerBind.
   */
  throttle: z.strictObject({
    pauseSeconds: atLeastZero().default(1),
    minRatePerBind: positive().default(10),
    recoverPerSecond: positive().optional(),
  }).default({ pauseSeconds: 1, minRatePerBind: 10 }),
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
  /**
   * The client (a `clients[].name`) that gets this upstream's inbound messages whose destination
   * is in no client's `inboundNumbers`. Default: none; such messages go to no client.
   */
  inboundClient: nonEmpty().optional(),
}).superRefine((u, ctx) => {
  if (u.password !== undefined && u.passwordFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'give password or passwordFile, not both' });
  } else if (u.password === undefined && u.passwordFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'one of password or passwordFile is required' });
  }
}).transform((u) => ({
  ...u,
  burst: u.burst ?? Math.max(1, Math.ceil(u.ratePerBind / 50)),
  throttle: { ...u.throttle, recoverPerSecond: u.throttle.recoverPerSecond ?? Math.max(1, Math.ceil(u.ratePerBind / 10)) },
}));

/** The built-in SMSC simulator, run in-process by `smppd start` when enabled (the demo). */
const simulatorSchema = z.strictObject({
  /** Default false. */
  enabled: flag().default(false),
  /** Address to listen on. Default 127.0.0.1. */
  host: nonEmpty().default('127.0.0.1'),
  /** Default 2775. 1–65535. */
  port: wholeNumber(1, 65535).default(2775),
  /** Required when enabled. At most 15 characters. */
  systemId: text(SYSTEM_ID_MAX, ' (SMPP v3.4 system_id)').min(1, { error: 'must not be empty' }).optional(),
  /** Exactly one of password and passwordFile when enabled. At most 8 characters. */
  password: text(PASSWORD_MAX, ' (SMPP v3.4 password)').optional(),
  passwordFile: nonEmpty().optional(),
  /** Milliseconds from submit_sm to its delivery receipt. Default 500. ≥ 0. */
  deliveryReceiptDelayMs: atLeastZero().default(500),
}, { error: 'must be a mapping' }).superRefine((s, ctx) => {
  if (s.password !== undefined && s.passwordFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'give password or passwordFile, not both' });
  }
  if (!s.enabled) return;
  if (s.systemId === undefined) ctx.addIssue({ code: 'custom', path: ['systemId'], message: 'is required when the simulator is enabled' });
  if (s.password === undefined && s.passwordFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'one of password or passwordFile is required when the simulator is enabled' });
  }
});

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
/** Bearer tokens shorter than this are refused: a short token can be guessed. */
export const TOKEN_MIN = 16;
/** SMPP v3.4 §5.2.8: source_addr is at most 21 octets with its NUL. */
const SENDER_MAX = 20;
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

/** The local HTTP API (the provider's SMS REST API, mirrored). */
const httpSchema = z.strictObject({
  /** Address to listen on, `host:port` (IPv6 in brackets). Default 127.0.0.1:8080. */
  listen: nonEmpty().refine((l) => parseListen(l) !== null, { error: 'must be host:port, e.g. 127.0.0.1:8080 or [::1]:8080, with a port of 0–65535' })
    .default('127.0.0.1:8080'),
  /** Largest JSON body, bytes. Default 1 MiB. 1 KiB–64 MiB. Larger: 413. */
  maxBodyBytes: wholeNumber(1024, 64 * MIB).default(MIB),
  /** Largest sendbulk number file, bytes. Default 50 MiB. 1 KiB–4 GiB. Larger: 413. */
  maxUploadBytes: wholeNumber(1024, 4096 * MIB).default(50 * MIB),
}, { error: 'must be a mapping' }).default({ listen: '127.0.0.1:8080', maxBodyBytes: MIB, maxUploadBytes: 50 * MIB });

/** One caller of the HTTP API: a bearer token and the sender IDs it may use. */
const clientSchema = z.strictObject({
  /** Required. 1–64 of A-Z a-z 0-9 _ . @ - ; unique among clients. Stored with its messages. */
  name: z.string({ error: typeMessage('a string') }).regex(CLIENT_NAME, { error: 'must be 1–64 letters, digits, _ . @ or -' }),
  /** Exactly one of token and tokenFile. At least 16 characters; unique among clients. */
  token: z.string({ error: typeMessage('a string') }).min(TOKEN_MIN, { error: `must be at least ${TOKEN_MIN} characters` }).optional(),
  /** A file holding the token; one trailing newline is trimmed. Relative to the config file. */
  tokenFile: nonEmpty().optional(),
  /** Sender IDs this client may use (403 otherwise). Default: any. */
  senders: z.array(text(SENDER_MAX, ' (SMPP v3.4 source_addr)').min(1, { error: 'must not be empty' }), { error: 'must be a list of sender IDs' })
    .min(1, { error: 'must list at least one sender ID; leave senders out to allow any' }).optional(),
  /** Where this client's events go. Default: none; the client gets no events. */
  webhook: webhookSchema.optional(),
  /** Inbound (MO) messages to these destination numbers go to this client. Digits only; each number in one client at most. */
  inboundNumbers: z.array(
    z.string({ error: typeMessage('a string') }).regex(INBOUND_NUMBER, { error: 'must be digits only, 1–20 of them (no + or spaces)' }),
    { error: 'must be a list of numbers, e.g. ["447700900123"]' },
  ).min(1, { error: 'must list at least one number; leave inboundNumbers out for none' }).optional(),
}, { error: 'must be a mapping { name, token or tokenFile, senders, webhook, inboundNumbers }' }).superRefine((c, ctx) => {
  if (c.token !== undefined && c.tokenFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'give token or tokenFile, not both' });
  } else if (c.token === undefined && c.tokenFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['token'], message: 'one of token or tokenFile is required' });
  }
});

/** The durable store: SQLite. */
const storeSchema = z.strictObject({
  /** The SQLite file; relative to the config file's folder. Default smppd.db. `:memory:` keeps nothing (tests). */
  path: nonEmpty().default('smppd.db'),
  /** fsync on every commit: safe against power loss, slower. Default false (safe against kill -9). */
  fsync: flag().default(false),
  /**
   * worker (default): SQLite runs on its own thread, so its CPU is on another core than HTTP and
   * SMPP. main: on the daemon's thread (one core; a little less memory and start-up time).
   */
  thread: oneOf(['worker', 'main'] as const).default('worker'),
}, { error: 'must be a mapping' }).default({ path: 'smppd.db', fsync: false, thread: 'worker' });

const limitsSchema = z.strictObject({
  /** Queued parts above which sends are refused with 429 and Retry-After. Default 100000. 1–1000000000. */
  maxQueued: wholeNumber(1, 1_000_000_000).default(100_000),
}, { error: 'must be a mapping' }).default({ maxQueued: 100_000 });

export const configSchema = z.strictObject({
  log: z.strictObject({
    /** Default info. */
    level: oneOf(LOG_LEVELS).default('info'),
  }, { error: 'must be a mapping' }).default({ level: 'info' }),
  shutdown: z.strictObject({
    /** Seconds a stop waits for outstanding submit_sm responses. Default 10. > 0. */
    drainSeconds: seconds().default(10),
  }, { error: 'must be a mapping' }).default({ drainSeconds: 10 }),
  simulator: simulatorSchema.optional(),
  /** At least one; names unique. */
  upstreams: z.array(upstreamSchema, { error: typeMessage('a list of upstreams') })
    .min(1, { error: 'must list at least one upstream' }),
  http: httpSchema,
  /**
   * Who may call the HTTP API. Default none (every request is 401). Names unique; tokens unique
   * (load.ts checks that, tokenFile contents included).
   */
  clients: z.array(clientSchema, { error: typeMessage('a list of clients') }).default([]),
  store: storeSchema,
  limits: limitsSchema,
}, { error: 'the configuration must be a YAML mapping' }).superRefine((c, ctx) => {
  const seen = new Map<string, number>();
  c.upstreams.forEach((u, i) => {
    const first = seen.get(u.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'name'], message: `duplicates upstreams[${first}].name` });
    else seen.set(u.name, i);
  });
  const clients = new Map<string, number>();
  c.clients.forEach((client, i) => {
    const first = clients.get(client.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['clients', i, 'name'], message: `duplicates clients[${first}].name` });
    else clients.set(client.name, i);
  });
  // An inbound message must have one owner: a number listed twice (even by one client) is a mistake.
  const numbers = new Map<string, number>();
  c.clients.forEach((client, i) => {
    client.inboundNumbers?.forEach((number, j) => {
      const first = numbers.get(number);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['clients', i, 'inboundNumbers', j], message: `also listed by clients[${first}]` });
      else numbers.set(number, i);
    });
  });
  c.upstreams.forEach((u, i) => {
    if (u.inboundClient !== undefined && !clients.has(u.inboundClient)) {
      ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'inboundClient'], message: 'names no client' });
    }
  });
});

// --- types ---

/** The file as validated, defaults applied: secrets and TLS files still named, not read. */
export type ParsedConfig = z.output<typeof configSchema>;
export type ParsedUpstream = ParsedConfig['upstreams'][number];
export type ParsedSimulator = NonNullable<ParsedConfig['simulator']>;

export type LogConfig = ParsedConfig['log'];
export type ShutdownConfig = ParsedConfig['shutdown'];
export type ParsedClient = ParsedConfig['clients'][number];
/** `store.path` resolved against the config file's folder (`:memory:` as given). */
export type StoreConfig = ParsedConfig['store'];
export type LimitsConfig = ParsedConfig['limits'];

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
}

/** A client's webhook with its secret and CA file read. */
export interface WebhookConfig {
  /** Absolute https:// URL (http:// only with allowHttp), no fragment. May carry a token: never log it whole. */
  url: string;
  /** From `secret` or the content of `secretFile`. At least 16 characters. A secret: masked by maskSecrets, redacted by the logger. Absent: unsigned. */
  secret?: string;
  /** Default false. */
  allowHttp: boolean;
  /** Seconds one attempt may take. Default 10. > 0. */
  timeoutSeconds: number;
  /** Requests in flight to this URL. Default 16. 1–1000. */
  concurrency: number;
  /** Backoff ceilings between attempts, seconds, full jitter. Default 1 … 300. maxSeconds ≥ initialSeconds. */
  retry: { initialSeconds: number; maxSeconds: number };
  /** Hours after it was queued that a still-failing event is parked as dead. Default 24. > 0. */
  maxAgeHours: number;
  /** The PEM file read: CAs trusted in addition to Node's bundled ones (not instead of them). */
  ca?: Buffer;
}

/** One HTTP client with its token read (inline or from `tokenFile`). */
export interface ClientConfig {
  name: string;
  /** The bearer token. A secret: masked by maskSecrets, redacted by the logger. */
  token: string;
  /** Sender IDs it may use; absent: any. */
  senders?: string[];
  /** Where its events go; absent: it gets none. */
  webhook?: WebhookConfig;
  /** Destination numbers (digits only) whose inbound messages are this client's; unique across clients. */
  inboundNumbers?: string[];
}

/** TLS settings with the files read. `false` in `UpstreamConfig.tls` means plain TCP. */
export interface TlsConfig {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  /** Default true. */
  rejectUnauthorized: boolean;
}

/** One upstream, validated, every default applied, the password and TLS files read. */
export interface UpstreamConfig extends Omit<ParsedUpstream, 'tls' | 'password' | 'passwordFile'> {
  tls: TlsConfig | false;
  /** From `password` or the content of `passwordFile`. */
  password: string;
}

/** The simulator section, resolved. `systemId` and `password` are '' when it is disabled and left unset. */
export interface SimulatorConfig extends Omit<ParsedSimulator, 'systemId' | 'password' | 'passwordFile'> {
  systemId: string;
  password: string;
}

/** The whole configuration as the daemon uses it. */
export interface SmppdConfig {
  log: LogConfig;
  shutdown: ShutdownConfig;
  simulator?: SimulatorConfig;
  upstreams: UpstreamConfig[];
  http: HttpConfig;
  clients: ClientConfig[];
  store: StoreConfig;
  limits: LimitsConfig;
}

// --- messages ---

/** `['upstreams', 0, 'tls', 'ca']` → `upstreams[0].tls.ca`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(top level)';
}

/** One line per problem, `path: reason`; never the value itself (it may be a secret). */
export function formatIssues(issues: ReadonlyArray<z.core.$ZodIssue>, at: ReadonlyArray<PropertyKey> = []): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...at, ...issue.path];
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) lines.push(`${formatPath([...path, key])}: unknown key`);
        break;
      case 'invalid_key':
        // A record key: the key's own rule says what is wrong with it.
        lines.push(...formatIssues(issue.issues, path));
        break;
      case 'invalid_union': {
        // `tls: false | {…}`: when the value has the shape of one branch, that branch's problems
        // (an unknown key, a cert without its key) say more than "must be false or a mapping".
        const fitting = issue.errors.filter((branch) => !branch.some((b) => b.path.length === 0 && (b.code === 'invalid_type' || b.code === 'invalid_value')));
        if (fitting.length === 1 && fitting[0]) lines.push(...formatIssues(fitting[0], path));
        else lines.push(`${formatPath(path)}: ${issue.message}`);
        break;
      }
      default:
        lines.push(`${formatPath(path)}: ${issue.message}`);
    }
  }
  return lines;
}
