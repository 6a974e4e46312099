import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { runCheckConfig } from '../../../src/cli/check-config.js';
import { runStart } from '../../../src/cli/start.js';
import type { Env } from '../../../src/config/env.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-check-config-'));
const file = (name: string, content: string): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};

/** Every kind of secret smppd takes, each a distinct string that must never be printed. */
const SECRETS = {
  inlinePassword: 'inlpw01',
  filePassword: 'filepw02',
  envPassword: 'envpw03',
  simulatorPassword: 'simpw04',
  tlsKey: 'TLS-KEY-SECRET-BYTES',
  inlineToken: 'inline-token-000000001',
  fileToken: 'file-token-0000000002',
  envToken: 'env-token-00000000003',
  inlineHookSecret: 'inline-hook-secret-0001',
  fileHookSecret: 'file-hook-secret-00002',
  envHookSecret: 'env-hook-secret-000003',
  urlPathToken: 'pathtok-inline-1',
  urlQueryToken: 'querytok-inline-1',
  urlUser: 'hookuser:hookpass',
  envUrlPathToken: 'pathtok-env-2',
  envUrlQueryToken: 'querytok-env-2',
} as const;

file('b.password', `${SECRETS.filePassword}\n`);
file('client.pem', 'CERT');
file('client-key.pem', SECRETS.tlsKey);
file('b.token', `${SECRETS.fileToken}\n`);
file('b-hook.secret', `${SECRETS.fileHookSecret}\n`);

const SECRET_CONFIG = file('secrets.yaml', `simulator: { enabled: true, systemId: sim, password: ${SECRETS.simulatorPassword} }
upstreams:
  - { name: a, host: a.example.net, systemId: a, password: ${SECRETS.inlinePassword}, tls: { cert: client.pem, key: client-key.pem } }
  - { name: b, host: b.example.net, systemId: b, passwordFile: b.password }
  - { name: c.eu, host: c.example.net, systemId: c, passwordFile: /run/secrets/absent }
clients:
  - name: a
    token: ${SECRETS.inlineToken}
    webhook: { url: "https://${SECRETS.urlUser}@hooks.example.com/${SECRETS.urlPathToken}?k=${SECRETS.urlQueryToken}", secret: ${SECRETS.inlineHookSecret} }
  - { name: b, tokenFile: b.token, webhook: { url: "https://b.example.com/hook", secretFile: b-hook.secret } }
  - { name: c, tokenFile: /run/secrets/absent }
`);
const SECRET_ENV: Env = {
  SMPPD_UPSTREAM_C_EU_PASSWORD: SECRETS.envPassword,
  SMPPD_CLIENT_C_TOKEN: SECRETS.envToken,
  SMPPD_CLIENT_C_WEBHOOK_URL: `https://env-hooks.example.com/${SECRETS.envUrlPathToken}?k=${SECRETS.envUrlQueryToken}`,
  SMPPD_CLIENT_C_WEBHOOK_SECRET: SECRETS.envHookSecret,
};

interface Run { code: number; out: string; err: string }

async function check(argv: string[], env: Env = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCheckConfig(argv, { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

function expectNoSecretIn(run: Run): void {
  for (const secret of Object.values(SECRETS)) {
    expect(run.out).not.toContain(secret);
    expect(run.err).not.toContain(secret);
  }
}

const VALID = file('valid.yaml', 'upstreams:\n  - { name: provider, host: smsc.example.net, systemId: s, password: pw }\nstore: { path: data/x.db }\n');

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('smppd check-config', () => {
  it('prints what it would run with as YAML, defaults applied, and exits 0', async () => {
    const run = await check(['--config', VALID]);
    expect(run.code).toBe(0);
    expect(run.err).toBe('');
    const [first, second] = run.out.split('\n');
    expect(first).toBe(`# smppd check-config: ${VALID} is valid`);
    expect(second).toBe('# environment overrides applied: none');
    const printed = parse(run.out) as Record<string, unknown>;
    expect(printed).toMatchObject({
      log: { level: 'info' },
      http: { listen: '127.0.0.1:8080', host: '127.0.0.1', port: 8080 },
      store: { path: join(dir, 'data', 'x.db'), fsync: false, thread: 'worker' },
      limits: { maxQueued: 100_000 },
      upstreams: [{ name: 'provider', port: 2775, binds: 1, window: 100, burst: 20, password: '***', tls: false }],
      clients: [],
    });
  });

  it('names the environment overrides it applied, never their values', async () => {
    const run = await check(['-c', VALID], { SMPPD_HTTP_LISTEN: '0.0.0.0:9443', SMPPD_UPSTREAM_PROVIDER_PASSWORD: 'envpw9', SMPPD_STORE_FSYNC: 'true' });
    expect(run.code).toBe(0);
    expect(run.out.split('\n')[1]).toBe('# environment overrides applied: SMPPD_HTTP_LISTEN, SMPPD_STORE_FSYNC, SMPPD_UPSTREAM_PROVIDER_PASSWORD');
    expect(parse(run.out)).toMatchObject({ http: { listen: '0.0.0.0:9443', port: 9443 }, store: { fsync: true }, upstreams: [{ password: '***' }] });
    expect(run.out).not.toContain('envpw9');
  });

  it('masks every kind of secret: inline, from a file, from the environment, in a webhook URL', async () => {
    const run = await check(['--config', SECRET_CONFIG], SECRET_ENV);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expectNoSecretIn(run);
    expect(parse(run.out)).toMatchObject({
      simulator: { password: '***' },
      upstreams: [
        { name: 'a', password: '***', tls: { cert: '<4 bytes>', key: `<${SECRETS.tlsKey.length} bytes>` } },
        { name: 'b', password: '***' },
        { name: 'c.eu', password: '***' },
      ],
      clients: [
        { name: 'a', token: '***', webhook: { url: 'https://hooks.example.com/***', secret: '***' } },
        { name: 'b', token: '***', webhook: { url: 'https://b.example.com/***', secret: '***' } },
        { name: 'c', token: '***', webhook: { url: 'https://env-hooks.example.com/***', secret: '***' } },
      ],
    });
  });

  it('an invalid config exits 1 with one problem per line on stderr, still without a secret', async () => {
    const run = await check(['--config', SECRET_CONFIG], {
      ...SECRET_ENV, SMPPD_UPSTREAM_A_BINDS: '0', SMPPD_CLIENT_B_TOKEN: SECRETS.inlineToken, SMPPD_UPSTREAM_C_EU_PASSWORD: `${SECRETS.envPassword}-too-long`,
    });
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.err.split('\n')).toEqual([
      `smppd: invalid configuration in ${SECRET_CONFIG}:`,
      'SMPPD_UPSTREAM_A_BINDS (upstreams[0].binds): must be a whole number from 1 to 64',
      'SMPPD_UPSTREAM_C_EU_PASSWORD (upstreams[2].password): must be at most 8 characters (SMPP v3.4 password)',
      'SMPPD_CLIENT_B_TOKEN (clients[1].token): the same token as clients[0]; each client needs its own',
    ]);
    expectNoSecretIn(run);
  });

  it('prints the same messages as smppd start', async () => {
    const bad = file('bad.yaml', 'upstreams:\n  - { name: p, host: h, systemId: s, password: pw, binds: 0, bindMode: rx }\nlog: { level: loud }\n');
    vi.stubEnv('SMPPD_HTTP_LISTEN', 'nowhere');
    const started: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => { started.push(line); });
    expect(await runStart(['--config', bad])).toBe(78); // EX_CONFIG: systemd does not restart on it
    const run = await check(['--config', bad], { SMPPD_HTTP_LISTEN: 'nowhere' });
    expect(run.code).toBe(1);
    expect(run.err).toBe(started.join('\n'));
    expect(run.err).toContain('SMPPD_HTTP_LISTEN (http.listen): must be host:port');
  });

  it('an unreadable config exits 1 and names the file', async () => {
    const missing = join(dir, 'missing.yaml');
    const run = await check(['--config', missing]);
    expect(run).toEqual({ code: 1, out: '', err: `smppd: cannot read config ${missing}: ENOENT` });
  });

  it('--help prints the usage and exits 0; usage errors exit 2', async () => {
    const help = await check(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: smppd check-config --config FILE/);
    for (const argv of [[], ['--config'], ['--frobnicate'], ['--config', VALID, 'extra']]) {
      const run = await check(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expect(run.err).toContain('Usage: smppd check-config');
      expect(run.out).toBe('');
    }
  });
});

describe('smppd check-config as a process', () => {
  const execFileAsync = promisify(execFile);
  const script = "const m = await import('./src/cli/check-config.ts'); process.exitCode = await m.runCheckConfig(process.argv.slice(1));";
  const node = async (args: string[], env: Env): Promise<Run> => {
    try {
      const { stdout, stderr } = await execFileAsync(process.execPath, ['--import', './test/support/ts-register.mjs', '--input-type=module', '-e', script, '--', ...args], { env });
      return { code: 0, out: stdout, err: stderr };
    } catch (e) {
      const failed = e as { code: number; stdout: string; stderr: string };
      return { code: failed.code, out: failed.stdout, err: failed.stderr };
    }
  };

  it('reads the process environment and reports through its exit code and streams', async () => {
    const ok = await node(['--config', SECRET_CONFIG], { PATH: process.env.PATH, ...SECRET_ENV });
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('# environment overrides applied: SMPPD_UPSTREAM_C_EU_PASSWORD, SMPPD_CLIENT_C_TOKEN');
    expectNoSecretIn(ok);
    const bad = await node(['--config', SECRET_CONFIG], { PATH: process.env.PATH, ...SECRET_ENV, SMPPD_LIMITS_MAX_QUEUED: 'lots' });
    expect(bad.code).toBe(1);
    expect(bad.out).toBe('');
    expect(bad.err).toContain('SMPPD_LIMITS_MAX_QUEUED (limits.maxQueued): must be a decimal number');
    expectNoSecretIn(bad);
  });
});
