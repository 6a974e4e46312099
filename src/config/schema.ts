/**
 * The configuration's shape, defaults and rules (zod), and the formatter that turns problems
 * into one line per key path: `upstreams[0].ratePerBind: must be a number ≥ 0`.
 * Secrets and TLS files are resolved by load.ts; this file only describes.
 */
import { z } from 'zod';

const seconds = (what: string) => z.number({ error: `must be a number of seconds` }).positive({ error: `${what} must be > 0` });
const int = (min: number, max: number) =>
  z.number({ error: `must be a whole number from ${min} to ${max}` }).int({ error: `must be a whole number from ${min} to ${max}` })
    .min(min, { error: `must be a whole number from ${min} to ${max}` }).max(max, { error: `must be a whole number from ${min} to ${max}` });
const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values, { error: `must be one of ${values.join(', ')}` });
const text = (max: number, what: string) => z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).max(max, { error: `${what} allows at most ${max} characters` });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const STATUS_CLASSES = ['ok', 'retry', 'reject', 'fail'] as const;

const tlsSchema = z.strictObject({
  /** PEM file with the CA(s) that sign the SMSC's certificate; the system's CAs when absent. */
  ca: z.string().min(1).optional(),
  /** PEM client certificate and key files, for SMSCs that require mutual TLS. */
  cert: z.string().min(1).optional(),
  key: z.string().min(1).optional(),
  /** Name to verify the certificate against (SNI); default the host when it is a name. */
  servername: z.string().min(1).optional(),
  /** Default true. false accepts any certificate: lab use only. */
  rejectUnauthorized: z.boolean({ error: 'must be true or false' }).default(true),
}).refine((t) => (t.cert === undefined) === (t.key === undefined), { error: 'cert and key go together', path: ['cert'] });

function isTimeZone(zone: string): boolean {
  if (zone === 'UTC' || /^[+-]\d{2}:\d{2}$/.test(zone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const statusCodeKey = /^(0x[0-9a-fA-F]{1,8}|\d{1,10})$/;

const upstreamSchema = z.strictObject({
  name: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: 'must be 1–64 letters, digits, _ . or -' }),
  host: z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') }).min(1, { error: 'is required' }),
  port: int(1, 65535).default(2775),
  tls: z.union([z.literal(false), tlsSchema], { error: 'must be false or { ca, cert, key, servername, rejectUnauthorized }' }).default(false),
  // SMPP v3.4 §5.2: system_id 16, password 9, system_type 13 octets including the NUL.
  systemId: text(15, 'system_id').min(1, { error: 'is required' }),
  password: text(8, 'the SMPP password').optional(),
  passwordFile: z.string().min(1).optional(),
  systemType: text(12, 'system_type').default(''),
  bindMode: oneOf(['transceiver', 'transmitter', 'receiver'] as const).default('transceiver'),
  addressRange: text(40, 'address_range').default(''),
  addrTon: int(0, 255).default(0),
  addrNpi: int(0, 255).default(0),
  binds: int(1, 64).default(1),
  window: int(1, 10_000).default(100),
  ratePerBind: z.number({ error: 'must be a number ≥ 0' }).min(0, { error: 'must be a number ≥ 0' }).default(1000),
  burst: int(1, 1_000_000).optional(),
  enquireLinkSeconds: seconds('enquireLinkSeconds').default(30),
  responseTimeoutSeconds: seconds('responseTimeoutSeconds').default(10),
  connectTimeoutSeconds: seconds('connectTimeoutSeconds').default(10),
  onUncertain: oneOf(['resend', 'fail'] as const).default('resend'),
  reconnect: z.strictObject({
    initialSeconds: seconds('initialSeconds').default(1),
    maxSeconds: seconds('maxSeconds').default(60),
  }).default({ initialSeconds: 1, maxSeconds: 60 })
    .refine((r) => r.maxSeconds >= r.initialSeconds, { error: 'must be ≥ initialSeconds', path: ['maxSeconds'] }),
  throttle: z.strictObject({
    pauseSeconds: z.number({ error: 'must be a number ≥ 0' }).min(0, { error: 'must be a number ≥ 0' }).default(1),
    minRatePerBind: z.number({ error: 'must be a number > 0' }).positive({ error: 'must be a number > 0' }).default(10),
    recoverPerSecond: z.number({ error: 'must be a number > 0' }).positive({ error: 'must be a number > 0' }).optional(),
  }).default({ pauseSeconds: 1, minRatePerBind: 10 }),
  retry: z.strictObject({
    maxAttempts: int(1, 1000).default(5),
    initialSeconds: seconds('initialSeconds').default(1),
    maxSeconds: seconds('maxSeconds').default(30),
  }).default({ maxAttempts: 5, initialSeconds: 1, maxSeconds: 30 }),
  // Text and segmentation (what data_coding 0 means here, how long messages travel).
  defaultAlphabet: oneOf(['gsm7', 'latin1', 'ascii'] as const).default('gsm7'),
  nationalLanguageShift: z.boolean({ error: 'must be true or false' }).default(false),
  longMessages: oneOf(['udh', 'sar', 'payload'] as const).default('udh'),
  udhReference: z.union([z.literal(8), z.literal(16)], { error: 'must be 8 or 16' }).default(8),
  maxParts: int(1, 255).default(10),
  // Receipts: how this SMSC writes message ids in receipts, and the zone of its dates.
  receiptIdFormat: oneOf(['auto', 'same', 'hex', 'decimal'] as const).default('auto'),
  smscTimeZone: z.string().min(1).refine(isTimeZone, { error: 'must be UTC, an offset like +04:00, or an IANA zone like Europe/Berlin' }).default('UTC'),
  requestReceipts: z.boolean({ error: 'must be true or false' }).default(true),
  commandStatus: z.record(
    z.string().regex(statusCodeKey, { error: 'keys must be command_status codes, hex (0x400) or decimal' }),
    oneOf(STATUS_CLASSES),
  ).default({}),
}).superRefine((u, ctx) => {
  if (u.password !== undefined && u.passwordFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'give password or passwordFile, not both' });
  } else if (u.password === undefined && u.passwordFile === undefined) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'one of password or passwordFile is required' });
  }
});

const simulatorSchema = z.strictObject({
  enabled: z.boolean({ error: 'must be true or false' }).default(false),
  host: z.string().min(1).default('127.0.0.1'),
  port: int(1, 65535).default(2775),
  systemId: text(15, 'system_id').min(1).optional(),
  password: text(8, 'the SMPP password').optional(),
  passwordFile: z.string().min(1).optional(),
  deliveryReceiptDelayMs: z.number({ error: 'must be a number ≥ 0' }).min(0, { error: 'must be a number ≥ 0' }).default(500),
}).superRefine((s, ctx) => {
  if (!s.enabled) return;
  if (s.systemId === undefined) ctx.addIssue({ code: 'custom', path: ['systemId'], message: 'is required when the simulator is enabled' });
  if ((s.password === undefined) === (s.passwordFile === undefined)) {
    ctx.addIssue({ code: 'custom', path: ['password'], message: 'exactly one of password or passwordFile is required when the simulator is enabled' });
  }
});

export const configSchema = z.strictObject({
  log: z.strictObject({ level: oneOf(LOG_LEVELS).default('info') }).default({ level: 'info' }),
  shutdown: z.strictObject({ drainSeconds: seconds('drainSeconds').default(10) }).default({ drainSeconds: 10 }),
  simulator: simulatorSchema.optional(),
  upstreams: z.array(upstreamSchema, { error: 'must be a list of upstreams' }).min(1, { error: 'at least one upstream is required' }),
}, { error: 'the configuration must be a YAML mapping' }).superRefine((c, ctx) => {
  const seen = new Map<string, number>();
  c.upstreams.forEach((u, i) => {
    const first = seen.get(u.name);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['upstreams', i, 'name'], message: `duplicates upstreams[${first}].name` });
    else seen.set(u.name, i);
  });
});

/** The file as parsed: before secrets and TLS files are read. */
export type RawConfig = z.infer<typeof configSchema>;

export type StatusClassName = (typeof STATUS_CLASSES)[number];

export interface TlsConfig {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  rejectUnauthorized: boolean;
}

/** One upstream, validated, with every default applied and secrets and files resolved. */
export interface UpstreamConfig extends Omit<RawConfig['upstreams'][number], 'tls' | 'password' | 'passwordFile' | 'burst' | 'throttle' | 'commandStatus'> {
  tls: TlsConfig | false;
  password: string;
  burst: number;
  throttle: { pauseSeconds: number; minRatePerBind: number; recoverPerSecond: number };
  commandStatus: Record<number, StatusClassName>;
}

export interface SimulatorConfig {
  enabled: boolean;
  host: string;
  port: number;
  systemId: string;
  password: string;
  deliveryReceiptDelayMs: number;
}

export type LogConfig = RawConfig['log'];

export interface SmppdConfig {
  log: LogConfig;
  shutdown: RawConfig['shutdown'];
  simulator?: SimulatorConfig;
  upstreams: UpstreamConfig[];
}

/** `a.b[0].c` */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(top level)';
}

/** One line per problem, `path: reason`; never the value itself (it may be a secret). */
export function formatIssues(issues: ReadonlyArray<z.core.$ZodIssue>): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${formatPath([...issue.path, key])}: unknown key`);
    } else {
      lines.push(`${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}
