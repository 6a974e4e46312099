import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, maskSecrets, parseConfig } from '../../../src/config/load.js';
import { isSmppdError } from '../../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-config-'));
const base = `upstreams:
  - name: provider
    host: 127.0.0.1
    systemId: smppclient1
    password: s3cr3tpw
`;

async function problem(yaml: string): Promise<string> {
  try {
    await parseConfig(yaml, dir);
  } catch (e) {
    if (isSmppdError(e, 'CONFIG_INVALID')) return e.message;
    throw e;
  }
  throw new Error('expected the config to be refused');
}

describe('config validation names the key path and the reason', () => {
  const cases: Array<[string, string, string]> = [
    ['negative ratePerBind', `${base}    ratePerBind: -1\n`, 'upstreams[0].ratePerBind: must be a number ≥ 0'],
    ['bindMode typo', `${base}    bindMode: tranceiver\n`, 'upstreams[0].bindMode: must be one of transceiver, transmitter, receiver'],
    ['binds 0', `${base}    binds: 0\n`, 'upstreams[0].binds: must be a whole number from 1 to 64'],
    ['window 0', `${base}    window: 0\n`, 'upstreams[0].window: must be a whole number from 1 to 10000'],
    ['missing host', base.replace('    host: 127.0.0.1\n', ''), 'upstreams[0].host: is required'],
    ['both password and passwordFile', `${base}    passwordFile: /x\n`, 'upstreams[0].password: give password or passwordFile, not both'],
    ['neither password nor passwordFile', base.replace('    password: s3cr3tpw\n', ''), 'upstreams[0].password: one of password or passwordFile is required'],
    ['unknown key', `${base}    ratePerbind: 5\n`, 'upstreams[0].ratePerbind: unknown key'],
    ['duplicate names', `${base}${base.replace('upstreams:\n', '')}`, 'upstreams[1].name: duplicates upstreams[0].name'],
    ['systemId too long', base.replace('smppclient1', 'a-very-long-system-id'), 'upstreams[0].systemId: system_id allows at most 15 characters'],
    ['bad commandStatus key', `${base}    commandStatus: { vendor: retry }\n`, 'upstreams[0].commandStatus'],
    ['bad commandStatus class', `${base}    commandStatus: { "0x400": maybe }\n`, 'upstreams[0].commandStatus.0x400: must be one of ok, retry, reject, fail'],
    ['unreadable tls.ca', `${base}    tls: { ca: missing-ca.pem }\n`, 'upstreams[0].tls.ca: cannot read'],
    ['cert without key', `${base}    tls: { cert: c.pem }\n`, 'upstreams[0].tls.cert: cert and key go together'],
    ['reconnect max below initial', `${base}    reconnect: { initialSeconds: 10, maxSeconds: 5 }\n`, 'upstreams[0].reconnect.maxSeconds: must be ≥ initialSeconds'],
    ['bad smscTimeZone', `${base}    smscTimeZone: Mars/Olympus\n`, 'upstreams[0].smscTimeZone: must be UTC, an offset like +04:00, or an IANA zone'],
    ['bad longMessages', `${base}    longMessages: split\n`, 'upstreams[0].longMessages: must be one of udh, sar, payload'],
    ['bad udhReference', `${base}    udhReference: 12\n`, 'upstreams[0].udhReference: must be 8 or 16'],
    ['no upstreams', 'upstreams: []\n', 'upstreams: at least one upstream is required'],
    ['unknown top-level key', `${base}logs: {}\n`, 'logs: unknown key'],
    ['bad log level', `${base}log: { level: verbose }\n`, 'log.level: must be one of fatal, error, warn, info, debug, trace, silent'],
    ['simulator enabled without credentials', `${base}simulator: { enabled: true }\n`, 'simulator.systemId: is required when the simulator is enabled'],
  ];
  for (const [name, yaml, expected] of cases) {
    it(name, async () => {
      const message = await problem(yaml);
      expect(message).toContain(expected);
      expect(message).not.toContain('s3cr3tpw');
    });
  }

  it('reports every problem at once', async () => {
    const message = await problem(`${base}    binds: 0\n    window: 0\n`);
    expect(message).toContain('upstreams[0].binds');
    expect(message).toContain('upstreams[0].window');
  });

  it('bad YAML syntax gives the line', async () => {
    const message = await problem('upstreams:\n  - name: a\n    host: [unclosed\n');
    expect(message).toMatch(/invalid YAML in config:\nconfig:\d+:\d+:/);
  });

  it('an unreadable config file is CONFIG_UNREADABLE', async () => {
    await expect(loadConfigFile(join(dir, 'nope.yaml'))).rejects.toMatchObject({ code: 'CONFIG_UNREADABLE' });
  });
});

describe('config defaults and secrets', () => {
  it('applies every default', async () => {
    const c = await parseConfig(base, dir);
    expect(c.log.level).toBe('info');
    expect(c.shutdown.drainSeconds).toBe(10);
    expect(c.upstreams[0]).toMatchObject({
      port: 2775, tls: false, systemType: '', bindMode: 'transceiver', binds: 1, window: 100, ratePerBind: 1000, burst: 20,
      enquireLinkSeconds: 30, responseTimeoutSeconds: 10, connectTimeoutSeconds: 10, onUncertain: 'resend',
      reconnect: { initialSeconds: 1, maxSeconds: 60 }, throttle: { pauseSeconds: 1, minRatePerBind: 10, recoverPerSecond: 100 },
      retry: { maxAttempts: 5, initialSeconds: 1, maxSeconds: 30 }, commandStatus: {},
      defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10,
      receiptIdFormat: 'auto', smscTimeZone: 'UTC', requestReceipts: true,
    });
  });

  it('reads passwordFile relative to the config and trims the trailing newline', async () => {
    writeFileSync(join(dir, 'pw'), 'fromfile\n');
    const c = await parseConfig(base.replace('password: s3cr3tpw', 'passwordFile: pw'), dir);
    expect(c.upstreams[0]!.password).toBe('fromfile');
  });

  it('reads TLS files and parses commandStatus codes', async () => {
    writeFileSync(join(dir, 'ca.pem'), 'CA');
    const c = await parseConfig(`${base}    tls: { ca: ca.pem, servername: smsc.example }\n    commandStatus: { "0x400": retry, "1025": reject }\n`, dir);
    const tls = c.upstreams[0]!.tls;
    expect(tls && tls.ca?.toString()).toBe('CA');
    expect(tls && tls.rejectUnauthorized).toBe(true);
    expect(c.upstreams[0]!.commandStatus).toEqual({ 0x400: 'retry', 1025: 'reject' });
  });

  it('maskSecrets hides passwords and file contents', async () => {
    writeFileSync(join(dir, 'ca2.pem'), 'SECRETCA');
    const c = await parseConfig(`${base}    tls: { ca: ca2.pem }\n`, dir);
    const printed = JSON.stringify(maskSecrets(c));
    expect(printed).not.toContain('s3cr3tpw');
    expect(printed).not.toContain('SECRETCA');
    expect(printed).toContain('"password":"***"');
    expect(printed).toContain('<8 bytes>');
  });

  it('the shipped configs load', async () => {
    const demo = await loadConfigFile(new URL('../../../config/smppd.yaml', import.meta.url).pathname);
    expect(demo.simulator?.enabled).toBe(true);
    writeFileSync('/tmp/smppd-example.password', 'pw\n');
    const example = await parseConfig(
      (await import('node:fs')).readFileSync(new URL('../../../config/smppd.example.yaml', import.meta.url), 'utf8')
        .replace('/etc/smppd/provider.password', '/tmp/smppd-example.password'),
      dir,
    );
    expect(example.upstreams[0]!.name).toBe('provider');
  });
});
