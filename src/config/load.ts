/**
 * Reads the YAML configuration once, at start: file → YAML → environment overrides (env.ts) →
 * files it names (passwordFile, tokenFile, webhook secretFile, TLS and webhook CA PEMs) →
 * validation → `SmppdConfig`. Every problem is reported at once, one `path: reason` per line (a
 * value from the environment: `VARIABLE (path): reason`), in one `SmppdError`; no message ever
 * carries a secret's value.
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { LineCounter, parseDocument, stringify } from 'yaml';
import { ErrorCode, SmppdError } from '../core/errors.js';
import { adminTokenFiles, adminTokenProblems, resolveAdmin } from './admin-schema.js';
import { amqpProblems, resolveAmqp } from './amqp-schema.js';
import { applyEnvOverrides, labelEnvProblems, type Env } from './env.js';
import { resolveRoutes } from './route-schema.js';
import {
  PASSWORD_MAX, TOKEN_MIN, configSchema, formatIssues, formatPath, parseListen,
  type ClientConfig, type HttpConfig, type ParsedClient, type ParsedConfig, type ParsedSimulator, type ParsedUpstream, type SimulatorConfig,
  type SmppdConfig, type StoreConfig, type TlsConfig, type UpstreamConfig, type WebhookConfig,
} from './schema.js';
import { unprintableOctetAt } from './schema-parts.js';

export type { Env } from './env.js';

/** A configuration and the environment variables that went into it. */
export interface LoadedConfig {
  config: SmppdConfig;
  /** The `SMPPD_…` variables applied, in table order: names only, for `check-config` to print. */
  envOverrides: string[];
}

/**
 * Reads, parses and validates a config file, with the `SMPPD_…` overrides of `env` applied.
 * Relative paths in it resolve against its folder.
 */
export async function loadConfigFile(path: string, env: Env = process.env): Promise<SmppdConfig> {
  return (await loadConfigWithOverrides(path, env)).config;
}

/** `loadConfigFile`, also naming the environment overrides it applied. */
export async function loadConfigWithOverrides(path: string, env: Env): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new SmppdError(ErrorCode.CONFIG_UNREADABLE, `cannot read config ${path}: ${reason(e)}`, { path }, { cause: e });
  }
  return parseConfigWithOverrides(text, dirname(resolve(path)), env, path);
}

/**
 * Parses and validates YAML text; relative file paths resolve against `baseDir`. `env`: the
 * `SMPPD_…` overrides to apply (default none). `source` names the text in messages.
 */
export async function parseConfig(text: string, baseDir: string, env: Env = {}, source = 'config'): Promise<SmppdConfig> {
  return (await parseConfigWithOverrides(text, baseDir, env, source)).config;
}

async function parseConfigWithOverrides(text: string, baseDir: string, env: Env, source: string): Promise<LoadedConfig> {
  const overrides = applyEnvOverrides(parseYaml(text, source), env);
  const input = overrides.input;
  const files = await readNamedFiles(input, baseDir);
  const parsed = configSchema.safeParse(input);
  const clientTokens = duplicateTokens(input, files.contents);
  const found = [...(parsed.success ? [] : formatIssues(parsed.error.issues)), ...files.problems, ...clientTokens.problems,
    ...adminTokenProblems(input, files.contents, clientTokens.tokens),
    ...(parsed.success ? httpTlsProblems(parsed.data.http.tls, files.contents) : []),
    ...(parsed.success ? amqpProblems(parsed.data.amqp, parsed.data.clients.map((c) => c.name), files.contents.get('amqp.urlFile')?.toString('utf8')) : [])];
  const problems = [...overrides.problems, ...labelEnvProblems(found, overrides.applied)];
  if (!parsed.success || problems.length > 0) throw invalid(source, problems);
  return { config: resolveConfig(parsed.data, files.contents, baseDir), envOverrides: overrides.applied.map((a) => a.variable) };
}

/**
 * A plain copy that is safe to print (`check-config`): every password, secret or token is '***',
 * every Buffer (TLS certificates and keys) is `<N bytes>`, and a webhook URL keeps only its
 * origin (`https://hooks.example.com/***`): its path or query may carry a token.
 */
export function maskSecrets(config: SmppdConfig): unknown {
  return mask(config, '');
}

/** `maskSecrets` as YAML (`check-config`): what the daemon would run with, safe to print. */
export function formatMaskedConfig(config: SmppdConfig): string {
  return stringify(maskSecrets(config), { lineWidth: 0 });
}

const SECRET_KEY = /password|secret|token/i;

function mask(value: unknown, key: string): unknown {
  if (Buffer.isBuffer(value)) return `<${value.length} bytes>`;
  if (SECRET_KEY.test(key) && typeof value === 'string') return '***';
  if (key === 'url' && typeof value === 'string') return maskUrl(value);
  if (Array.isArray(value)) return value.map((v) => mask(v, ''));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mask(v, k)]));
  }
  return value;
}

// --- YAML ---

function parseYaml(text: string, source: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // The first line of the parser's message only: the rest quotes the source, which may hold a password.
    const lines = doc.errors.map((e) => {
      const { line, col } = lineCounter.linePos(e.pos[0]);
      return `${source}:${line}:${col}: ${e.message.split('\n')[0]}`;
    });
    throw new SmppdError(ErrorCode.CONFIG_INVALID, `invalid YAML in ${source}:\n${lines.join('\n')}`, { problems: lines });
  }
  return doc.toJS() ?? {};
}

// --- files named by the config ---

interface FileRef {
  /** Key path of the setting that names the file, e.g. `upstreams[0].tls.ca`. */
  at: string;
  file: string;
  /** As written in the config, relative or not. */
  given: string;
  /**
   * A secret file (a password, a token or a webhook secret) loses one trailing newline
   * (`echo pw > file`), and its path stays out of messages: a secret typed into passwordFile by
   * mistake must not be printed.
   */
  secret: 'password' | 'token' | 'secret' | 'url' | false;
}

interface NamedFiles {
  contents: Map<string, Buffer>;
  problems: string[];
}

/**
 * Reads every file the input names, before validation, so that a missing file is reported with
 * the schema's problems rather than after they are fixed. Works on the unvalidated input: what
 * is not a string here is the schema's to report.
 */
async function readNamedFiles(input: unknown, baseDir: string): Promise<NamedFiles> {
  const refs: FileRef[] = [];
  const add = (at: ReadonlyArray<string | number>, file: unknown, secret: FileRef['secret']): void => {
    if (typeof file === 'string' && file !== '') refs.push({ at: formatPath(at), file: resolve(baseDir, file), given: file, secret });
  };
  // A passwordFile beside a password is the schema's to refuse; reading it would only add noise.
  if (isRecord(input)) {
    const sim = input.simulator;
    if (isRecord(sim) && sim.enabled === true && sim.password === undefined) add(['simulator', 'passwordFile'], sim.passwordFile, 'password');
    if (Array.isArray(input.upstreams)) {
      input.upstreams.forEach((u: unknown, i) => {
        if (!isRecord(u)) return;
        if (u.password === undefined) add(['upstreams', i, 'passwordFile'], u.passwordFile, 'password');
        const tls = u.tls;
        if (isRecord(tls)) for (const key of ['ca', 'cert', 'key'] as const) add(['upstreams', i, 'tls', key], tls[key], false);
      });
    }
    const http = input.http;
    if (isRecord(http) && isRecord(http.tls)) for (const key of ['cert', 'key', 'ca'] as const) add(['http', 'tls', key], http.tls[key], false);
    const store = input.store;
    if (isRecord(store) && store.kind === 'postgres' && store.url === undefined) add(['store', 'urlFile'], store.urlFile, 'url');
    const amqp = input.amqp;
    if (isRecord(amqp) && amqp.url === undefined) add(['amqp', 'urlFile'], amqp.urlFile, 'url');
    if (Array.isArray(input.clients)) {
      input.clients.forEach((c: unknown, i) => {
        if (!isRecord(c)) return;
        if (c.token === undefined) add(['clients', i, 'tokenFile'], c.tokenFile, 'token');
        const hook = c.webhook;
        if (!isRecord(hook)) return;
        if (hook.secret === undefined) add(['clients', i, 'webhook', 'secretFile'], hook.secretFile, 'secret');
        add(['clients', i, 'webhook', 'ca'], hook.ca, false);
      });
    }
    for (const [i, file] of adminTokenFiles(input)) add(['admin', 'tokens', i, 'tokenFile'], file, 'token');
  }
  const read = await Promise.all(refs.map(async (ref) => {
    try {
      const data = await readFile(ref.file);
      return { ref, data: ref.secret ? trimNewline(data) : data };
    } catch (e) {
      const what = !ref.secret ? ref.file : isAbsolute(ref.given) ? 'the file' : `the file (relative to ${baseDir})`;
      return { ref, problem: `${ref.at}: cannot read ${what}: ${reason(e)}` };
    }
  }));
  const contents = new Map<string, Buffer>();
  const problems: string[] = [];
  for (const r of read) {
    if (r.data === undefined) problems.push(r.problem);
    else if (r.ref.secret === 'password' && r.data.toString('utf8').length > PASSWORD_MAX) {
      problems.push(`${r.ref.at}: the password in the file must be at most ${PASSWORD_MAX} characters (SMPP v3.4 password)`);
    } else if (r.ref.secret === 'password' && unprintableOctetAt(r.data.toString('utf8')) >= 0) {
      const at = unprintableOctetAt(r.data.toString('utf8')) + 1;
      problems.push(`${r.ref.at}: the password in the file must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character ${at} is not`);
    } else if ((r.ref.secret === 'token' || r.ref.secret === 'secret') && r.data.toString('utf8').length < TOKEN_MIN) {
      problems.push(`${r.ref.at}: the ${r.ref.secret} in the file must be at least ${TOKEN_MIN} characters`);
    } else contents.set(r.ref.at, r.data);
  }
  return { contents, problems };
}

/**
 * Two clients with one token could not be told apart. Checked here rather than in the schema
 * because a token may come from a file; names the later client, never the token. Also gives
 * each client's token with its index, for the admin tokens' check.
 */
function duplicateTokens(input: unknown, files: Map<string, Buffer>): { problems: string[]; tokens: Map<string, number> } {
  const seen = new Map<string, number>();
  if (!isRecord(input) || !Array.isArray(input.clients)) return { problems: [], tokens: seen };
  const problems: string[] = [];
  input.clients.forEach((c: unknown, i) => {
    if (!isRecord(c)) return;
    const inline = typeof c.token === 'string' ? c.token : undefined;
    const token = inline ?? files.get(`clients[${i}].tokenFile`)?.toString('utf8');
    if (token === undefined) return;
    const first = seen.get(token);
    if (first !== undefined) problems.push(`clients[${i}].${inline !== undefined ? 'token' : 'tokenFile'}: the same token as clients[${first}]; each client needs its own`);
    else seen.set(token, i);
  });
  return { problems, tokens: seen };
}

/**
 * `http.tls` as a server would use it: a key that does not match its certificate, a file that
 * is not PEM, or a ca that holds no certificate, is found by check-config rather than when the
 * listener starts or clients fail. OpenSSL's reasons name no content.
 */
function httpTlsProblems(tls: ParsedConfig['http']['tls'], files: Map<string, Buffer>): string[] {
  const cert = files.get('http.tls.cert');
  const key = files.get('http.tls.key');
  if (tls === undefined || cert === undefined || key === undefined) return [];
  const ca = files.get('http.tls.ca');
  const unusableCa = ca === undefined ? undefined : caProblem(ca);
  if (unusableCa !== undefined) return [`http.tls.ca: ${unusableCa}`];
  try {
    createSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    return [];
  } catch (e) {
    return [`http.tls: the certificate, key${ca ? ' and ca' : ''} do not make a TLS server: ${e instanceof Error ? e.message : String(e)}`];
  }
}

/** A PEM certificate (RFC 7468 §5), as CA files hold them, one after another. */
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Why `ca` cannot verify client certificates, or undefined. OpenSSL loads a CA file without a
 * word when it holds no certificate at all (a private key, an empty file, DER), and then every
 * client's handshake fails.
 */
function caProblem(ca: Buffer): string | undefined {
  const certificates = ca.toString('latin1').match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) return 'holds no PEM certificate (-----BEGIN CERTIFICATE-----), so no client certificate could be verified';
  for (const [i, pem] of certificates.entries()) {
    try {
      new X509Certificate(pem);
    } catch (e) {
      return `certificate ${i + 1} of the file cannot be read: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  return undefined;
}

function trimNewline(data: Buffer): Buffer {
  let end = data.length;
  if (end > 0 && data[end - 1] === 0x0a) end--;
  if (end > 0 && end < data.length && data[end - 1] === 0x0d) end--;
  return data.subarray(0, end);
}

// --- the typed result ---

function resolveConfig(parsed: ParsedConfig, files: Map<string, Buffer>, baseDir: string): SmppdConfig {
  // Inline, or the content of the file (read and checked by readNamedFiles).
  const secret = (inline: string | undefined, at: string): string => inline ?? files.get(at)?.toString('utf8') ?? '';
  const upstreams = parsed.upstreams.map((u, i) => resolveUpstream(u, `upstreams[${i}]`, files, secret));
  const clients = parsed.clients.map((c, i) => resolveClient(c, `clients[${i}]`, files, secret));
  const { host, port } = parseListen(parsed.http.listen) ?? { host: '', port: 0 }; // validated by the schema
  const { tls: httpTls, ...httpSettings } = parsed.http;
  const http: HttpConfig = { ...httpSettings, host, port };
  if (httpTls !== undefined) {
    // Read by readNamedFiles; a missing one has stopped the load before this.
    const file = (key: string): Buffer => files.get(`http.tls.${key}`) ?? Buffer.alloc(0);
    http.tls = { cert: file('cert'), key: file('key'), requestClientCert: httpTls.requestClientCert, ...(httpTls.ca !== undefined ? { ca: file('ca') } : {}) };
  }
  const st = parsed.store;
  const store: StoreConfig = st.kind === 'postgres'
    ? {
      kind: 'postgres', url: secret(st.url, 'store.urlFile'), schema: st.schema, leaseSeconds: st.leaseSeconds, instanceId: st.instanceId ?? hostname(),
      retentionDays: st.retentionDays,
    }
    : { kind: 'sqlite', path: st.path === ':memory:' ? ':memory:' : resolve(baseDir, st.path), fsync: st.fsync, thread: st.thread, retentionDays: st.retentionDays };
  // Without routes, every upstream that can send (not bindMode receiver), in file order.
  const routes = resolveRoutes(parsed.routes, upstreams.filter((u) => u.bindMode !== 'receiver').map((u) => u.name));
  const config: SmppdConfig = {
    log: parsed.log, shutdown: parsed.shutdown, upstreams, routes, routesConfigured: parsed.routes !== undefined, http, clients, store, limits: parsed.limits,
  };
  const metricsListen = parsed.metrics.listen === undefined ? null : parseListen(parsed.metrics.listen); // validated by the schema
  if (metricsListen) config.metrics = { listen: metricsListen };
  if (parsed.admin) config.admin = resolveAdmin(parsed.admin, secret);
  if (parsed.mcp.enabled) config.mcp = { enabled: true };
  if (parsed.records) config.records = { path: resolve(baseDir, parsed.records.path) };
  if (parsed.amqp) config.amqp = resolveAmqp(parsed.amqp, secret(parsed.amqp.url, 'amqp.urlFile'));
  if (parsed.simulator) config.simulator = resolveSimulator(parsed.simulator, secret);
  return config;
}

type Secret = (inline: string | undefined, at: string) => string;

function resolveUpstream(u: ParsedUpstream, at: string, files: Map<string, Buffer>, secret: Secret): UpstreamConfig {
  const { password, passwordFile: _file, tls, ...rest } = u;
  let resolvedTls: TlsConfig | false = false;
  if (tls !== false) {
    resolvedTls = { rejectUnauthorized: tls.rejectUnauthorized };
    if (tls.servername !== undefined) resolvedTls.servername = tls.servername;
    for (const key of ['ca', 'cert', 'key'] as const) {
      const data = files.get(`${at}.tls.${key}`);
      if (data !== undefined) resolvedTls[key] = data;
    }
  }
  return { ...rest, tls: resolvedTls, password: secret(password, `${at}.passwordFile`) };
}

function resolveClient(c: ParsedClient, at: string, files: Map<string, Buffer>, secret: Secret): ClientConfig {
  const { token, tokenFile: _file, webhook, ...rest } = c;
  const client: ClientConfig = { ...rest, token: secret(token, `${at}.tokenFile`) };
  if (webhook !== undefined) {
    const { secret: inline, secretFile: _secretFile, ca: _ca, ...settings } = webhook;
    const resolved: WebhookConfig = settings;
    // Neither secret nor secretFile: unsigned, so no '' stands in for a missing secret.
    if (inline !== undefined || webhook.secretFile !== undefined) resolved.secret = secret(inline, `${at}.webhook.secretFile`);
    const ca = files.get(`${at}.webhook.ca`);
    if (ca !== undefined) resolved.ca = ca;
    client.webhook = resolved;
  }
  return client;
}

function resolveSimulator(s: ParsedSimulator, secret: Secret): SimulatorConfig {
  const { password, passwordFile: _file, systemId, ...rest } = s;
  return { ...rest, systemId: systemId ?? '', password: secret(password, 'simulator.passwordFile') };
}

// --- helpers ---

/** Origin only (no user info, path, query): `https://hooks.example.com/***`. */
function maskUrl(url: string): string {
  try {
    const { origin, protocol, host } = new URL(url);
    // postgres:// and amqp:// have no origin in WHATWG terms: scheme and host are what may show.
    if (origin === 'null') return host === '' ? '***' : `${protocol}//${host}/***`;
    return `${origin}/***`;
  } catch {
    return '***';
  }
}

function invalid(source: string, problems: string[]): SmppdError {
  return new SmppdError(ErrorCode.CONFIG_INVALID, `invalid configuration in ${source}:\n${problems.join('\n')}`, { problems });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** `ENOENT`, or the message when the error has no code. Never the file's content. */
function reason(e: unknown): string {
  if (isRecord(e) && typeof e.code === 'string') return e.code;
  return e instanceof Error ? e.message : String(e);
}
