import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyEnvOverrides, envName, type Env } from '../../../src/config/env.js';
import { loadConfigFile, loadConfigWithOverrides, parseConfig } from '../../../src/config/load.js';
import { configRefusal, sqliteStore } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-env-'));
const FILE_PASSWORD = 'filepw';
const ENV_PASSWORD = 'envpw#1';
const FILE_TOKEN = 'file-token-0123456789';
const ENV_TOKEN = 'env-token-abcdefghijkl';
const ENV_HOOK_SECRET = 'env-hook-secret-0123456';
const URL_TOKEN = 'urltok-9f8e7d6c5b4a';
const ENV_URL = `https://env-hooks.example.com/in?key=${URL_TOKEN}`;

/** Two upstreams (one with `.` and `-` in its name) and two clients, one with a webhook. */
const base = `upstreams:
  - name: provider
    host: smsc.example.net
    systemId: smppclient1
    password: ${FILE_PASSWORD}
  - name: eu-1.backup
    host: backup.example.net
    systemId: backup
    password: ${FILE_PASSWORD}
clients:
  - { name: app, token: ${FILE_TOKEN} }
  - { name: shop.eu, token: ${FILE_TOKEN}x, webhook: { url: "https://hooks.example.com/shop", secret: file-hook-secret-0123 } }
`;

const load = (env: Env, yaml = base) => parseConfig(yaml, dir, env);

/** Through a file, to see the names of the variables applied too. */
async function loadWith(env: Env, yaml = base) {
  const path = join(dir, 'with-env.yaml');
  writeFileSync(path, yaml);
  return loadConfigWithOverrides(path, env);
}

async function problems(env: Env, yaml = base): Promise<string[]> {
  return (await configRefusal(() => load(env, yaml))).split('\n').slice(1);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('each variable sets its key', () => {
  const cases: Array<[string, string, (c: Awaited<ReturnType<typeof load>>) => unknown, unknown]> = [
    ['SMPPD_LOG_LEVEL', 'debug', (c) => c.log.level, 'debug'],
    ['SMPPD_HTTP_LISTEN', '0.0.0.0:9090', (c) => c.http, expect.objectContaining({ listen: '0.0.0.0:9090', host: '0.0.0.0', port: 9090 })],
    ['SMPPD_STORE_PATH', '/var/lib/smppd/x.db', (c) => sqliteStore(c).path, '/var/lib/smppd/x.db'],
    ['SMPPD_STORE_PATH', 'data/x.db', (c) => sqliteStore(c).path, join(dir, 'data', 'x.db')],
    ['SMPPD_STORE_FSYNC', 'true', (c) => sqliteStore(c).fsync, true],
    ['SMPPD_STORE_FSYNC', 'FALSE', (c) => sqliteStore(c).fsync, false],
    ['SMPPD_LIMITS_MAX_QUEUED', '5000', (c) => c.limits.maxQueued, 5000],
    ['SMPPD_SHUTDOWN_DRAIN_SECONDS', ' 2.5 ', (c) => c.shutdown.drainSeconds, 2.5],
    ['SMPPD_UPSTREAM_PROVIDER_HOST', 'smsc2.example.net', (c) => c.upstreams.map((u) => u.host), ['smsc2.example.net', 'backup.example.net']],
    ['SMPPD_UPSTREAM_EU_1_BACKUP_HOST', '10.0.0.7', (c) => c.upstreams.map((u) => u.host), ['smsc.example.net', '10.0.0.7']],
    ['SMPPD_UPSTREAM_EU_1_BACKUP_PORT', '2776', (c) => c.upstreams[1]!.port, 2776],
    ['SMPPD_UPSTREAM_PROVIDER_SYSTEM_ID', 'host7', (c) => c.upstreams[0]!.systemId, 'host7'],
    ['SMPPD_UPSTREAM_PROVIDER_PASSWORD', ENV_PASSWORD, (c) => c.upstreams.map((u) => u.password), [ENV_PASSWORD, FILE_PASSWORD]],
    ['SMPPD_UPSTREAM_PROVIDER_BINDS', '8', (c) => c.upstreams[0]!.binds, 8],
    ['SMPPD_CLIENT_APP_TOKEN', ENV_TOKEN, (c) => c.clients.map((x) => x.token), [ENV_TOKEN, `${FILE_TOKEN}x`]],
    ['SMPPD_CLIENT_SHOP_EU_WEBHOOK_URL', ENV_URL, (c) => c.clients[1]!.webhook!.url, ENV_URL],
    ['SMPPD_CLIENT_SHOP_EU_WEBHOOK_SECRET', ENV_HOOK_SECRET, (c) => c.clients[1]!.webhook!.secret, ENV_HOOK_SECRET],
  ];
  for (const [variable, value, read, expected] of cases) {
    it(`${variable}=${JSON.stringify(value)}`, async () => {
      const { config, envOverrides } = await loadWith({ [variable]: value });
      expect(read(config)).toEqual(expected);
      expect(envOverrides).toEqual([variable]);
    });
  }

  it('SMPPD_STORE_KIND and SMPPD_STORE_URL make a postgres store; the URL replaces urlFile and is never echoed', async () => {
    const c = await load({ SMPPD_STORE_KIND: 'postgres', SMPPD_STORE_URL: 'postgres://u:envpgpw@db/smppd\n' }, `${base}store: { kind: sqlite, urlFile: missing.url }\n`);
    expect(c.store).toEqual({ kind: 'postgres', url: 'postgres://u:envpgpw@db/smppd', schema: 'smppd', leaseSeconds: 300, instanceId: hostname(), retentionDays: 30 });
  });

  it('adds a section the file leaves out, with the rest of its defaults', async () => {
    const c = await load({ SMPPD_HTTP_LISTEN: '[::1]:0', SMPPD_STORE_FSYNC: 'true' });
    expect(c.http).toEqual({
      listen: '[::1]:0', host: '::1', port: 0, maxBodyBytes: 1_048_576, maxUploadBytes: 52_428_800, maxBulkNumbers: 1_000_000, maxConcurrentUploads: 16, maxResendDays: 7, idempotencyHours: 24,
      headersTimeoutSeconds: 10, requestTimeoutSeconds: 30, bulkRequestTimeoutSeconds: 600, keepAliveTimeoutSeconds: 5, maxConnections: 1000, maxConnectionsPerAddress: 0,
    });
    expect(c.store).toEqual({ kind: 'sqlite', path: join(dir, 'smppd.db'), fsync: true, thread: 'worker', retentionDays: 30 });
  });

  it('keeps the file’s other keys of a section it overrides', async () => {
    const c = await load({ SMPPD_HTTP_LISTEN: '127.0.0.1:1' }, `${base}http: { listen: "127.0.0.1:2", maxBodyBytes: 2048 }\n`);
    expect(c.http).toMatchObject({ port: 1, maxBodyBytes: 2048 });
  });

  it('names the variables applied in table order, and no other SMPPD_ variable matters', async () => {
    const { envOverrides } = await loadWith({
      SMPPD_CLIENT_APP_TOKEN: ENV_TOKEN, SMPPD_UPSTREAM_EU_1_BACKUP_BINDS: '2', SMPPD_LOG_LEVEL: 'warn', SMPPD_UPSTREAM_PROVIDER_PORT: '1',
      SMPPD_BENCH_DAEMON_NODE_ARGS: '--cpu-prof', SMPPD_INTEROP_PERL: 'perl', HOME: '/root', smppd_log_level: 'nonsense',
    });
    expect(envOverrides).toEqual(['SMPPD_LOG_LEVEL', 'SMPPD_UPSTREAM_PROVIDER_PORT', 'SMPPD_UPSTREAM_EU_1_BACKUP_BINDS', 'SMPPD_CLIENT_APP_TOKEN']);
  });

  it('changes nothing without overrides, and parseConfig takes none by default', async () => {
    vi.stubEnv('SMPPD_LOG_LEVEL', 'trace');
    expect(await parseConfig(base, dir)).toEqual(await load({}));
    expect((await parseConfig(base, dir)).log.level).toBe('info');
  });

  it('loadConfigFile reads the process environment by default, and takes another', async () => {
    const path = join(dir, 'smppd.yaml');
    writeFileSync(path, base);
    vi.stubEnv('SMPPD_LOG_LEVEL', 'trace');
    expect((await loadConfigFile(path)).log.level).toBe('trace');
    expect((await loadConfigFile(path, {})).log.level).toBe('info');
    expect((await loadConfigFile(path, { SMPPD_LOG_LEVEL: 'error' })).log.level).toBe('error');
  });

  it('leaves the parsed YAML it is given untouched', () => {
    const yaml = { upstreams: [{ name: 'a', host: 'h', passwordFile: 'pw' }] };
    const { input } = applyEnvOverrides(yaml, { SMPPD_UPSTREAM_A_HOST: 'other', SMPPD_UPSTREAM_A_PASSWORD: 'x', SMPPD_LOG_LEVEL: 'warn' });
    expect(yaml).toEqual({ upstreams: [{ name: 'a', host: 'h', passwordFile: 'pw' }] });
    expect(input).toEqual({ upstreams: [{ name: 'a', host: 'other', password: 'x' }], log: { level: 'warn' } });
  });
});

describe('names in variables', () => {
  it('are upper case with _ for every character but A–Z and 0–9', () => {
    expect(envName('provider')).toBe('PROVIDER');
    expect(envName('eu-1.backup')).toBe('EU_1_BACKUP');
    expect(envName('shop@eu_2')).toBe('SHOP_EU_2');
  });

  it('a variable naming an upstream or client the file does not have is refused, naming the variable', async () => {
    expect(await problems({ SMPPD_UPSTREAM_PROVIDR_HOST: 'x', SMPPD_CLIENT_AP_TOKEN: ENV_TOKEN })).toEqual([
      'SMPPD_UPSTREAM_PROVIDR_HOST: no upstream in the file is named PROVIDR (in a variable, a name is upper case with _ for each character but A–Z and 0–9);'
        + ' the file\'s upstreams: provider (PROVIDER), eu-1.backup (EU_1_BACKUP)',
      'SMPPD_CLIENT_AP_TOKEN: no client in the file is named AP (in a variable, a name is upper case with _ for each character but A–Z and 0–9);'
        + ' the file\'s clients: app (APP), shop.eu (SHOP_EU)',
    ]);
  });

  it('a client variable when the file has no clients is refused', async () => {
    const yaml = base.slice(0, base.indexOf('clients:'));
    expect(await problems({ SMPPD_CLIENT_APP_TOKEN: ENV_TOKEN }, yaml)).toEqual([
      expect.stringMatching(/^SMPPD_CLIENT_APP_TOKEN: no client in the file is named APP .*; the file has no clients$/),
    ]);
  });

  it('a variable for a key that cannot be overridden is refused, in every namespace of smppd', async () => {
    const found = await problems({ SMPPD_UPSTREAM_PROVIDER_RATE_PER_BIND: '5', SMPPD_CLIENT_APP_SENDERS: 'X', SMPPD_HTTP_PORT: '80', SMPPD_STORE_FILE: 'x' });
    expect(found).toEqual([
      expect.stringMatching(/^SMPPD_HTTP_PORT: not an override; the environment can set SMPPD_LOG_LEVEL, SMPPD_HTTP_LISTEN, /),
      expect.stringMatching(/^SMPPD_STORE_FILE: not an override/),
      'SMPPD_UPSTREAM_PROVIDER_RATE_PER_BIND: not an override; per upstream: SMPPD_UPSTREAM_<NAME>_HOST, SMPPD_UPSTREAM_<NAME>_PORT,'
        + ' SMPPD_UPSTREAM_<NAME>_SYSTEM_ID, SMPPD_UPSTREAM_<NAME>_PASSWORD, SMPPD_UPSTREAM_<NAME>_BINDS',
      'SMPPD_CLIENT_APP_SENDERS: not an override; per client: SMPPD_CLIENT_<NAME>_TOKEN, SMPPD_CLIENT_<NAME>_WEBHOOK_URL, SMPPD_CLIENT_<NAME>_WEBHOOK_SECRET',
    ]);
  });

  it('a variable that matches two upstreams is refused rather than applied to either', async () => {
    const twice = `upstreams:\n  - { name: a.b, host: h, systemId: s, password: p }\n  - { name: a-b, host: h, systemId: s, password: p }\n`;
    expect(await problems({ SMPPD_UPSTREAM_A_B_HOST: 'x' }, twice)).toEqual([
      'SMPPD_UPSTREAM_A_B_HOST: matches more than one upstream (upstreams[0], upstreams[1]); give them names that differ in letters or digits',
    ]);
    // Without such a variable the names are fine.
    expect((await load({}, twice)).upstreams).toHaveLength(2);
  });
});

describe('secrets from the environment', () => {
  it('replace passwordFile, tokenFile and secretFile, which are then not read', async () => {
    const yaml = `upstreams:
  - { name: provider, host: h, systemId: s, passwordFile: /nonexistent/pw }
clients:
  - { name: app, tokenFile: /nonexistent/token, webhook: { url: "https://hooks.example.com/x", secretFile: /nonexistent/secret } }
`;
    const c = await load({ SMPPD_UPSTREAM_PROVIDER_PASSWORD: ENV_PASSWORD, SMPPD_CLIENT_APP_TOKEN: ENV_TOKEN, SMPPD_CLIENT_APP_WEBHOOK_SECRET: ENV_HOOK_SECRET }, yaml);
    expect(c.upstreams[0]!.password).toBe(ENV_PASSWORD);
    expect(c.clients[0]!.token).toBe(ENV_TOKEN);
    expect(c.clients[0]!.webhook!.secret).toBe(ENV_HOOK_SECRET);
  });

  it('replace inline ones, and need none in the file at all', async () => {
    const yaml = 'upstreams:\n  - { name: provider, host: h, systemId: s }\nclients:\n  - { name: app }\n';
    const c = await load({ SMPPD_UPSTREAM_PROVIDER_PASSWORD: ENV_PASSWORD, SMPPD_CLIENT_APP_TOKEN: ENV_TOKEN }, yaml);
    expect(c.upstreams[0]!.password).toBe(ENV_PASSWORD);
    expect(c.clients[0]!.token).toBe(ENV_TOKEN);
    expect(await problems({}, yaml)).toEqual(['upstreams[0].password: one of password or passwordFile is required', 'clients[0].token: one of token or tokenFile is required']);
  });

  it('lose one trailing newline, as from a file', async () => {
    const c = await load({ SMPPD_UPSTREAM_PROVIDER_PASSWORD: `${ENV_PASSWORD}\n`, SMPPD_CLIENT_APP_TOKEN: `${ENV_TOKEN}\r\n` });
    expect(c.upstreams[0]!.password).toBe(ENV_PASSWORD);
    expect(c.clients[0]!.token).toBe(ENV_TOKEN);
  });

  it('WEBHOOK_URL adds a webhook the file does not have; WEBHOOK_SECRET alone is refused', async () => {
    const c = await load({ SMPPD_CLIENT_APP_WEBHOOK_URL: ENV_URL, SMPPD_CLIENT_APP_WEBHOOK_SECRET: ENV_HOOK_SECRET });
    expect(c.clients[0]!.webhook).toMatchObject({ url: ENV_URL, secret: ENV_HOOK_SECRET, concurrency: 16 });
    const found = await problems({ SMPPD_CLIENT_APP_WEBHOOK_SECRET: ENV_HOOK_SECRET });
    expect(found).toEqual([
      'SMPPD_CLIENT_APP_WEBHOOK_SECRET (clients[0].webhook.secret): clients[0] has no webhook; add one to the file or set SMPPD_CLIENT_APP_WEBHOOK_URL',
    ]);
    expect(found.join('\n')).not.toContain(ENV_HOOK_SECRET);
  });
});

describe('a bad value names the variable and the key path, never the value', () => {
  const cases: Array<[string, Env, string]> = [
    ['log level', { SMPPD_LOG_LEVEL: 'verbose' }, 'SMPPD_LOG_LEVEL (log.level): must be one of fatal, error, warn, info, debug, trace, silent'],
    ['listen without a port', { SMPPD_HTTP_LISTEN: 'localhost' },
      'SMPPD_HTTP_LISTEN (http.listen): must be host:port, e.g. 127.0.0.1:8080 or [::1]:8080, with a port of 0–65535'],
    ['fsync not a flag', { SMPPD_STORE_FSYNC: 'yes' }, 'SMPPD_STORE_FSYNC (store.fsync): must be true or false'],
    ['fsync 1', { SMPPD_STORE_FSYNC: '1' }, 'SMPPD_STORE_FSYNC (store.fsync): must be true or false'],
    ['maxQueued not a number', { SMPPD_LIMITS_MAX_QUEUED: '10k' }, 'SMPPD_LIMITS_MAX_QUEUED (limits.maxQueued): must be a decimal number'],
    ['maxQueued in hex', { SMPPD_LIMITS_MAX_QUEUED: '0x10' }, 'SMPPD_LIMITS_MAX_QUEUED (limits.maxQueued): must be a decimal number'],
    ['maxQueued 0', { SMPPD_LIMITS_MAX_QUEUED: '0' }, 'SMPPD_LIMITS_MAX_QUEUED (limits.maxQueued): must be a whole number from 1 to 1000000000'],
    ['drainSeconds negative', { SMPPD_SHUTDOWN_DRAIN_SECONDS: '-1' }, 'SMPPD_SHUTDOWN_DRAIN_SECONDS (shutdown.drainSeconds): must be a number of seconds > 0'],
    ['store path empty', { SMPPD_STORE_PATH: '' }, 'SMPPD_STORE_PATH (store.path): is set but empty; unset it to keep the file’s value'],
    ['port out of range', { SMPPD_UPSTREAM_EU_1_BACKUP_PORT: '70000' }, 'SMPPD_UPSTREAM_EU_1_BACKUP_PORT (upstreams[1].port): must be a whole number from 1 to 65535'],
    ['port not a number', { SMPPD_UPSTREAM_PROVIDER_PORT: 'smpp' }, 'SMPPD_UPSTREAM_PROVIDER_PORT (upstreams[0].port): must be a decimal number'],
    ['binds not whole', { SMPPD_UPSTREAM_PROVIDER_BINDS: '1.5' }, 'SMPPD_UPSTREAM_PROVIDER_BINDS (upstreams[0].binds): must be a whole number from 1 to 64'],
    ['host empty', { SMPPD_UPSTREAM_PROVIDER_HOST: '' }, 'SMPPD_UPSTREAM_PROVIDER_HOST (upstreams[0].host): is set but empty'],
    ['systemId too long', { SMPPD_UPSTREAM_PROVIDER_SYSTEM_ID: 'a-very-long-system-id' },
      'SMPPD_UPSTREAM_PROVIDER_SYSTEM_ID (upstreams[0].systemId): must be at most 15 characters (SMPP v3.4 system_id)'],
    ['password too long', { SMPPD_UPSTREAM_PROVIDER_PASSWORD: 'toolong-envpw' },
      'SMPPD_UPSTREAM_PROVIDER_PASSWORD (upstreams[0].password): must be at most 8 characters (SMPP v3.4 password)'],
    ['password empty', { SMPPD_UPSTREAM_PROVIDER_PASSWORD: '' }, 'SMPPD_UPSTREAM_PROVIDER_PASSWORD (upstreams[0].password): is set but empty'],
    ['token too short', { SMPPD_CLIENT_APP_TOKEN: 'short-envtok' }, 'SMPPD_CLIENT_APP_TOKEN (clients[0].token): must be at least 16 characters'],
    ['token equal to another client’s', { SMPPD_CLIENT_SHOP_EU_TOKEN: FILE_TOKEN },
      'SMPPD_CLIENT_SHOP_EU_TOKEN (clients[1].token): the same token as clients[0]; each client needs its own'],
    ['webhook url http', { SMPPD_CLIENT_SHOP_EU_WEBHOOK_URL: ENV_URL.replace('https:', 'http:') },
      'SMPPD_CLIENT_SHOP_EU_WEBHOOK_URL (clients[1].webhook.url): must be an https:// URL; set allowHttp: true to allow http://'],
    ['webhook url not a URL', { SMPPD_CLIENT_SHOP_EU_WEBHOOK_URL: `env-hooks.example.com/in?key=${URL_TOKEN}` },
      'SMPPD_CLIENT_SHOP_EU_WEBHOOK_URL (clients[1].webhook.url): must be an absolute https:// URL'],
    ['webhook secret too short', { SMPPD_CLIENT_SHOP_EU_WEBHOOK_SECRET: 'short-envsecret' },
      'SMPPD_CLIENT_SHOP_EU_WEBHOOK_SECRET (clients[1].webhook.secret): must be at least 16 characters'],
  ];
  for (const [name, env, expected] of cases) {
    it(name, async () => {
      const found = await problems(env);
      expect(found).toHaveLength(1);
      expect(found[0]).toContain(expected);
      const message = found.join('\n');
      for (const value of Object.values(env)) if (value !== '' && value !== undefined && value.length > 2) expect(message).not.toContain(value);
      for (const secret of [FILE_PASSWORD, FILE_TOKEN, URL_TOKEN, 'env-hooks.example.com']) expect(message).not.toContain(secret);
    });
  }

  it('lists every problem at once: the environment’s first, then the file’s, each labelled by where it came from', async () => {
    const found = await problems({ SMPPD_STORE_FSYNC: 'maybe', SMPPD_UPSTREAM_PROVIDER_BINDS: '0', SMPPD_CLIENT_NOBODY_TOKEN: ENV_TOKEN }, `${base}limits: { maxQueued: 0 }\n`);
    expect(found).toEqual([
      'SMPPD_STORE_FSYNC (store.fsync): must be true or false',
      expect.stringMatching(/^SMPPD_CLIENT_NOBODY_TOKEN: no client in the file is named NOBODY /),
      'SMPPD_UPSTREAM_PROVIDER_BINDS (upstreams[0].binds): must be a whole number from 1 to 64',
      'limits.maxQueued: must be a whole number from 1 to 1000000000',
    ]);
    expect(found.join('\n')).not.toContain(ENV_TOKEN);
  });

  it('a problem at a key the environment did not set keeps its plain path', async () => {
    expect(await problems({ SMPPD_UPSTREAM_PROVIDER_PASSWORD: ENV_PASSWORD }, base.replace('systemId: backup\n', 'systemId: backup\n    binds: 0\n'))).toEqual([
      'upstreams[1].binds: must be a whole number from 1 to 64',
    ]);
  });
});
