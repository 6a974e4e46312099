/**
 * The configuration's shape, defaults and rules (zod), the types inferred from it, and the
 * formatter that turns problems into one line per key path: `upstreams[0].ratePerBind: must be
 * a number ≥ 0`. Secrets and TLS files are read by load.ts; this file only describes.
 *
 * Messages never quote the offending value: it may be a password.
 */
import { z } from 'zod';
import { adminSchema, type AdminConfig } from './admin-schema.js';
import { amqpSchema, type AmqpConfig } from './amqp-schema.js';
import { clientSchema } from './client-schema.js';
import { httpSchema, parseListen, type HttpConfig } from './http-schema.js';
import { routeProblems, routesSchema, type RouteConfig } from './route-schema.js';
import { atLeastZero, cOctets, flag, nonEmpty, oneOf, seconds, typeMessage, wholeNumber } from './schema-parts.js';
import { PASSWORD_MAX, SYSTEM_ID_MAX, upstreamSchema } from './upstream-schema.js';

export type { AdminConfig, AdminTokenConfig } from './admin-schema.js';
export type { AmqpConfig, AmqpEventsConfig } from './amqp-schema.js';
export { TOKEN_MIN } from './client-schema.js';
export {
  HTTP_LISTENER_DEFAULTS, MAX_CONCURRENT_UPLOADS, MAX_RESEND_DAYS, parseListen, type HttpConfig, type HttpTlsConfig,
} from './http-schema.js';
export { DEFAULT_ROUTE_NAME, ROUTE_STRATEGIES, routeName, type RouteConfig, type RouteStrategy } from './route-schema.js';
export {
  BIND_MODES, DEFAULT_ALPHABETS, LONG_MESSAGE_MODES, PASSWORD_MAX, RECEIPT_ID_FORMATS, STATUS_CLASSES, type StatusClass,
} from './upstream-schema.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `simulator.receiptRouting`: the simulator's RECEIPT_ROUTINGS (src/simulator/receipt-routing.ts),
 * repeated because config may not import the simulator layer (DESIGN.md); a unit test holds the two equal.
 */
export const SIMULATOR_RECEIPT_ROUTINGS = ['same', 'any', 'other-system-type'] as const;

/** The built-in SMSC simulator, run in-process by `smppd start` when enabled (the demo). */
const simulatorSchema = z.strictObject({
  /** Default false. */
  enabled: flag().default(false),
  /** Address to listen on. Default 127.0.0.1. */
  host: nonEmpty().default('127.0.0.1'),
  /** Default 2775. 1–65535. */
  port: wholeNumber(1, 65535).default(2775),
  /** Required when enabled. At most 15 characters. */
  systemId: cOctets(SYSTEM_ID_MAX, ' (SMPP v3.4 system_id)').min(1, { error: 'must not be empty' }).optional(),
  /** Exactly one of password and passwordFile when enabled. At most 8 characters. */
  password: cOctets(PASSWORD_MAX, ' (SMPP v3.4 password)').optional(),
  passwordFile: nonEmpty().optional(),
  /** Milliseconds from submit_sm to its delivery receipt. Default 500. ≥ 0. */
  deliveryReceiptDelayMs: atLeastZero().default(500),
  /**
   * Which bind of the account a receipt goes to: 'same' (the submitting bind), 'any'
   * (round-robin), 'other-system-type' (a bind whose bind PDU carried another system_type, i.e.
   * another instance; else as 'same'). Default 'same'.
   */
  receiptRouting: oneOf(SIMULATOR_RECEIPT_ROUTINGS).default('same'),
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

/** The durable store: SQLite. */
/**
 * The durable store: SQLite (one host, the default) or PostgreSQL (several instances sharing one
 * queue, receipt index and outbox). One flat mapping: `kind` says which keys apply.
 */
const storeSchema = z.strictObject({
  /** sqlite (default) or postgres. */
  kind: oneOf(['sqlite', 'postgres'] as const).default('sqlite'),
  /** sqlite: the file; relative to the config file's folder. Default smppd.db. `:memory:` keeps nothing (tests). */
  path: nonEmpty().default('smppd.db'),
  /** sqlite: fsync on every commit: safe against power loss, slower. Default false (safe against kill -9). */
  fsync: flag().default(false),
  /**
   * sqlite: worker (default): SQLite runs on its own thread, so its CPU is on another core than
   * HTTP and SMPP. main: on the daemon's thread (one core; a little less memory and start-up time).
   */
  thread: oneOf(['worker', 'main'] as const).default('worker'),
  /** postgres: the connection URL, postgres://user:password@host:5432/db (a secret: it may hold a password). Or urlFile. */
  url: nonEmpty().refine((u) => /^postgres(ql)?:\/\//.test(u), { error: 'must be a postgres:// URL' }).optional(),
  /** postgres: a file holding the URL; one trailing newline is trimmed. */
  urlFile: nonEmpty().optional(),
  /** postgres: the schema smppd's tables live in. Default smppd. */
  schema: z.string({ error: 'must be a string' }).regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: 'must be a lower-case SQL name (a-z, 0-9, _)' }).default('smppd'),
  /**
   * postgres: seconds a claim holds its parts or events against the other instances after its
   * instance is gone (crashed, or cut off from the database); they take them over within 2 s more.
   * Default 300. > 0.
   */
  leaseSeconds: seconds().default(300),
  /**
   * postgres: this process's name among the instances sharing the store, the same across its
   * restarts (a restart recovers what its previous run left in flight). Default: the host name.
   * Two running processes may not share one.
   */
  instanceId: z.string({ error: typeMessage('a string') }).regex(/^[A-Za-z0-9_.@-]{1,64}$/, { error: 'must be 1–64 letters, digits, _ . @ or -' }).optional(),
  /**
   * Days a finished message (all parts done, no event left in the outbox), an emptied batch and an
   * inbound message are kept before the retention sweep deletes them. Default 30. 0–3650; 0 keeps
   * everything (no sweep). Both kinds.
   */
  retentionDays: wholeNumber(0, 3650).default(30),
}, { error: 'must be a mapping' }).superRefine((st, ctx) => {
  if (st.kind === 'postgres') {
    if (st.url !== undefined && st.urlFile !== undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'give url or urlFile, not both' });
    else if (st.url === undefined && st.urlFile === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'one of url or urlFile is required with kind: postgres' });
  } else if (st.url !== undefined || st.urlFile !== undefined) {
    ctx.addIssue({ code: 'custom', path: [st.url !== undefined ? 'url' : 'urlFile'], message: 'is for kind: postgres; this store is sqlite' });
  }
}).default({ kind: 'sqlite', path: 'smppd.db', fsync: false, thread: 'worker', schema: 'smppd', leaseSeconds: 300, retentionDays: 30 });

/** Where GET /metrics is served: by default on the HTTP API's port; `listen` moves it to its own. */
const metricsSchema = z.strictObject({
  /** `host:port` of a separate metrics listener. Default: none (served on http.listen). */
  listen: nonEmpty().refine((l) => parseListen(l) !== null, { error: 'must be host:port, e.g. 127.0.0.1:9464, with a port of 0–65535' }).optional(),
}, { error: 'must be a mapping' }).default({});

/**
 * The per-message records (docs/records.md): one JSON line per message that reached its final
 * status, appended to `path` after the commit; the file is opened again at SIGHUP (logrotate).
 * Absent: none is written, and the store queues none.
 */
const recordsSchema = z.strictObject({
  /** The file, created when missing; relative to the config file's folder. With several instances on one store, each its own. */
  path: nonEmpty(),
}, { error: 'must be a mapping' });

const limitsSchema = z.strictObject({
  /**
   * Queued parts of all clients, at most: a send or a sendbulk upload (all its parts, counted
   * before any is stored) that would pass it is refused with 429 and Retry-After. Default 100000.
   * 1–1000000000.
   */
  maxQueued: wholeNumber(1, 1_000_000_000).default(100_000),
}, { error: 'must be a mapping' }).default({ maxQueued: 100_000 });

export const configSchema = z.strictObject({
  log: z.strictObject({
    /** Default info. */
    level: oneOf(LOG_LEVELS).default('info'),
    /**
     * Seconds between two lines of one kind of warning about what an SMSC sends (malformed PDUs,
     * unexpected responses, drops…), per bind or upstream: the first at once with its details, the
     * rest counted and told in one line at the interval's end. Default 60. 0–86400; 0 logs each.
     */
    warningIntervalSeconds: wholeNumber(0, 86_400).default(60),
  }, { error: 'must be a mapping' }).default({ level: 'info', warningIntervalSeconds: 60 }),
  shutdown: z.strictObject({
    /** Seconds a stop waits for outstanding submit_sm responses. Default 10. > 0. */
    drainSeconds: seconds().default(10),
  }, { error: 'must be a mapping' }).default({ drainSeconds: 10 }),
  simulator: simulatorSchema.optional(),
  /** At least one; names unique. */
  upstreams: z.array(upstreamSchema, { error: typeMessage('a list of upstreams') })
    .min(1, { error: 'must list at least one upstream' }),
  /** Which upstreams a number (and a client) goes over (route-schema.ts). Default: every upstream, in file order, one failover route. */
  routes: routesSchema,
  http: httpSchema,
  /**
   * Who may call the HTTP API. Default none (every request is 401). Names unique; tokens unique
   * (load.ts checks that, tokenFile contents included).
   */
  clients: z.array(clientSchema, { error: typeMessage('a list of clients') }).default([]),
  /** Who may call the admin API under /admin (admin-schema.ts). Default: none, and the admin API is off. */
  admin: adminSchema.optional(),
  /** The MCP server at /mcp on the HTTP listener, for the clients' AI agents (ingress/http/mcp.ts). */
  mcp: z.strictObject({
    /** Default false: /mcp is 404. */
    enabled: flag().default(false),
  }, { error: 'must be a mapping' }).default({ enabled: false }),
  store: storeSchema,
  limits: limitsSchema,
  metrics: metricsSchema,
  records: recordsSchema.optional(),
  /** The RabbitMQ queue ingress and event publisher (amqp-schema.ts). Default: none. */
  amqp: amqpSchema.optional(),
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
    // An instance's submit outcome may reach the shared store up to a lease later than a receipt
    // that another instance's bind took: past its lease, its parts are another instance's to resend.
    if (c.store.kind === 'postgres' && u.parkedReceipts.maxAgeSeconds < c.store.leaseSeconds) {
      ctx.addIssue({
        code: 'custom', path: ['upstreams', i, 'parkedReceipts', 'maxAgeSeconds'],
        message: `must be ≥ store.leaseSeconds (${c.store.leaseSeconds}) with store kind postgres: another instance may record the submit_sm_resp that late`,
      });
    }
  });
  if (c.routes !== undefined) {
    const receivers = new Set(c.upstreams.filter((u) => u.bindMode === 'receiver').map((u) => u.name));
    for (const p of routeProblems(c.routes, new Set(seen.keys()), new Set(clients.keys()), receivers)) ctx.addIssue({ code: 'custom', path: p.path, message: p.message });
  }
});

// --- types ---

/** The file as validated, defaults applied: secrets and TLS files still named, not read. */
export type ParsedConfig = z.output<typeof configSchema>;
export type ParsedUpstream = ParsedConfig['upstreams'][number];
export type ParsedSimulator = NonNullable<ParsedConfig['simulator']>;

export type LogConfig = ParsedConfig['log'];
export type ShutdownConfig = ParsedConfig['shutdown'];
export type ParsedClient = ParsedConfig['clients'][number];
/** The store section resolved: sqlite with its path against the config file's folder (`:memory:` as given), or postgres with its URL read. */
export type StoreConfig =
  | { kind: 'sqlite'; path: string; fsync: boolean; thread: 'worker' | 'main'; retentionDays: number }
  | { kind: 'postgres'; url: string; schema: string; leaseSeconds: number; instanceId: string; retentionDays: number };
export type LimitsConfig = ParsedConfig['limits'];
/** `metrics.listen` split into host and port when given. */
export interface MetricsConfig {
  listen?: { host: string; port: number };
}

/** The records section with its path resolved against the config file's folder. */
export interface RecordsConfig {
  path: string;
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
  /** Send requests per second (> 0) and the burst (≥ 1, default ceil(perSecond)); absent: unlimited. */
  rateLimit?: { perSecond: number; burst: number };
  /** Its queued parts, at most (beside limits.maxQueued); absent: no cap of its own. */
  maxQueued?: number;
  /** Its share of the binds against the other clients'. Default 1. 1–1000. */
  weight: number;
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
  /**
   * At least one. Without `routes` in the file: one route named 'default', prefix '' (every
   * number, every client), failover over every upstream in file order.
   */
  routes: RouteConfig[];
  /** Whether the file has `routes`: false when `routes` is the one route made of every upstream. */
  routesConfigured: boolean;
  http: HttpConfig;
  clients: ClientConfig[];
  /** Absent: the admin API (/admin) is off. */
  admin?: AdminConfig;
  /** Absent: no MCP server (/mcp is 404). */
  mcp?: { enabled: true };
  store: StoreConfig;
  limits: LimitsConfig;
  /** Absent: /metrics on the HTTP port. */
  metrics?: MetricsConfig;
  /** Absent: no records file, none queued. */
  records?: RecordsConfig;
  /** Absent: no queue ingress, no events to an exchange. */
  amqp?: AmqpConfig;
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
      // The other codes, and any a later zod adds, read as their message.
      case 'invalid_type':
      case 'invalid_value':
      case 'invalid_format':
      case 'invalid_element':
      case 'not_multiple_of':
      case 'too_big':
      case 'too_small':
      case 'custom':
      default:
        lines.push(`${formatPath(path)}: ${issue.message}`);
    }
  }
  return lines;
}
