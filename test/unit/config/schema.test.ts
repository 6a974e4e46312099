import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, maskSecrets, parseConfig } from '../../../src/config/load.js';
import { SIMULATOR_RECEIPT_ROUTINGS } from '../../../src/config/schema.js';
import { isSmppdError, type ErrorCode } from '../../../src/core/errors.js';
import { RECEIPT_ROUTINGS } from '../../../src/simulator/receipt-routing.js';
import { sqliteStore } from '../../support/config.js';


const dir = mkdtempSync(join(tmpdir(), 'smppd-config-'));
const SECRET = 's3cr3tpw';
const TOKEN = 'tok-0123456789abcdef';
const base = `upstreams:
  - name: provider
    host: 127.0.0.1
    systemId: smppclient1
    password: ${SECRET}
`;
const second = base.replace('upstreams:\n', '');

async function refusal(load: Promise<unknown>, code: ErrorCode = 'CONFIG_INVALID'): Promise<string> {
  try {
    await load;
  } catch (e) {
    if (isSmppdError(e, code)) return e.message;
    throw e;
  }
  throw new Error('expected the config to be refused');
}

const problem = (yaml: string): Promise<string> => refusal(parseConfig(yaml, dir));

describe('a bad value is refused with its key path and the reason', () => {
  const cases: Array<[string, string, string]> = [
    ['negative ratePerBind', `${base}    ratePerBind: -1\n`, 'upstreams[0].ratePerBind: must be a number ≥ 0'],
    ['negative failoverAfterSeconds', `${base}    failoverAfterSeconds: -1\n`, 'upstreams[0].failoverAfterSeconds: must be a number ≥ 0'],
    ['failoverAfterSeconds as a string', `${base}    failoverAfterSeconds: "10"\n`, 'upstreams[0].failoverAfterSeconds: must be a number ≥ 0'],
    ['bindMode typo', `${base}    bindMode: tranceiver\n`, 'upstreams[0].bindMode: must be one of transceiver, transmitter, receiver'],
    ['bindMode typo in the second upstream', `${base}${second.replace('provider', 'other')}    bindMode: rx\n`,
      'upstreams[1].bindMode: must be one of transceiver, transmitter, receiver'],
    ['binds 0', `${base}    binds: 0\n`, 'upstreams[0].binds: must be a whole number from 1 to 64'],
    ['binds not whole', `${base}    binds: 1.5\n`, 'upstreams[0].binds: must be a whole number from 1 to 64'],
    ['window 0', `${base}    window: 0\n`, 'upstreams[0].window: must be a whole number from 1 to 10000'],
    ['missing host', base.replace('    host: 127.0.0.1\n', ''), 'upstreams[0].host: is required'],
    ['missing name', base.replace('  - name: provider\n    host', '  - host'), 'upstreams[0].name: is required'],
    ['bad name', base.replace('name: provider', 'name: "pro vider"'), 'upstreams[0].name: must be 1–64 letters, digits, _ . or -'],
    ['both password and passwordFile', `${base}    passwordFile: pw\n`, 'upstreams[0].password: give password or passwordFile, not both'],
    ['neither password nor passwordFile', base.replace(`    password: ${SECRET}\n`, ''), 'upstreams[0].password: one of password or passwordFile is required'],
    ['password too long', base.replace(SECRET, `${SECRET}x`), 'upstreams[0].password: must be at most 8 characters'],
    ['password past Latin-1', base.replace(SECRET, 'pw€x'), 'upstreams[0].password: must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character 3 is not'],
    ['password as a YAML number', base.replace(SECRET, '12345678'), 'upstreams[0].password: must be a string: put it in quotes'],
    ['unknown key', `${base}    ratePerbind: 5\n`, 'upstreams[0].ratePerbind: unknown key'],
    ['unknown key in tls', `${base}    tls: { cafile: ca.pem }\n`, 'upstreams[0].tls.cafile: unknown key'],
    ['unknown top-level key', `${base}logs: {}\n`, 'logs: unknown key'],
    ['tls true', `${base}    tls: true\n`, 'upstreams[0].tls: must be false or a mapping { ca, cert, key, servername, rejectUnauthorized }'],
    ['duplicate upstream names', `${base}${second}`, 'upstreams[1].name: duplicates upstreams[0].name'],
    ['systemId too long', base.replace('smppclient1', 'a-very-long-system-id'), 'upstreams[0].systemId: must be at most 15 characters'],
    ['systemType too long', `${base}    systemType: abcdefghijklm\n`, 'upstreams[0].systemType: must be at most 12 characters'],
    ['port out of range', `${base}    port: 70000\n`, 'upstreams[0].port: must be a whole number from 1 to 65535'],
    ['addrTon out of range', `${base}    addrTon: 256\n`, 'upstreams[0].addrTon: must be a whole number from 0 to 255'],
    ['enquireLinkSeconds 0', `${base}    enquireLinkSeconds: 0\n`, 'upstreams[0].enquireLinkSeconds: must be a number of seconds > 0'],
    ['onUncertain typo', `${base}    onUncertain: retry\n`, 'upstreams[0].onUncertain: must be one of resend, fail'],
    ['bad commandStatus key', `${base}    commandStatus: { vendor: retry }\n`,
      'upstreams[0].commandStatus.vendor: must be a command_status code, hex (0x400) or decimal (1024)'],
    ['commandStatus key over 32 bits', `${base}    commandStatus: { "0x100000000": retry }\n`, 'upstreams[0].commandStatus.0x100000000: must be a command_status code'],
    ['commandStatus code given twice', `${base}    commandStatus: { "0x400": retry, "1024": fail }\n`, 'upstreams[0].commandStatus.0x400: is the same code as 1024'],
    ['bad commandStatus class', `${base}    commandStatus: { "0x400": maybe }\n`, 'upstreams[0].commandStatus.0x400: must be one of ok, retry, reject, fail'],
    ['unreadable tls.ca', `${base}    tls: { ca: missing-ca.pem }\n`, `upstreams[0].tls.ca: cannot read ${join(dir, 'missing-ca.pem')}: ENOENT`],
    ['unreadable passwordFile', base.replace(`password: ${SECRET}`, 'passwordFile: /nonexistent/pw'), 'upstreams[0].passwordFile: cannot read the file: ENOENT'],
    ['unreadable relative passwordFile', base.replace(`password: ${SECRET}`, 'passwordFile: nope'),
      `upstreams[0].passwordFile: cannot read the file (relative to ${dir}): ENOENT`],
    ['cert without key', `${base}    tls: { cert: c.pem }\n`, 'upstreams[0].tls.key: is required with cert'],
    ['key without cert', `${base}    tls: { key: k.pem }\n`, 'upstreams[0].tls.cert: is required with key'],
    ['reconnect.maxSeconds below initialSeconds', `${base}    reconnect: { initialSeconds: 10, maxSeconds: 5 }\n`,
      'upstreams[0].reconnect.maxSeconds: must be ≥ initialSeconds'],
    ['retry.maxSeconds below initialSeconds', `${base}    retry: { initialSeconds: 60 }\n`, 'upstreams[0].retry.maxSeconds: must be ≥ initialSeconds'],
    ['throttle.minRatePerBind 0', `${base}    throttle: { minRatePerBind: 0 }\n`, 'upstreams[0].throttle.minRatePerBind: must be a number > 0'],
    ['no upstreams', 'upstreams: []\n', 'upstreams: must list at least one upstream'],
    ['upstreams missing', 'log: { level: info }\n', 'upstreams: is required'],
    ['upstreams not a list', 'upstreams: { name: a }\n', 'upstreams: must be a list of upstreams'],
    ['not a mapping', '- a\n', '(top level): the configuration must be a YAML mapping'],
    ['bad log level', `${base}log: { level: verbose }\n`, 'log.level: must be one of fatal, error, warn, info, debug, trace, silent'],
    ['drainSeconds negative', `${base}shutdown: { drainSeconds: -1 }\n`, 'shutdown.drainSeconds: must be a number of seconds > 0'],
    ['simulator enabled without systemId', `${base}simulator: { enabled: true, password: x }\n`, 'simulator.systemId: is required when the simulator is enabled'],
    ['simulator enabled without password', `${base}simulator: { enabled: true, systemId: x }\n`,
      'simulator.password: one of password or passwordFile is required when the simulator is enabled'],
    ['bad simulator.receiptRouting', `${base}simulator: { receiptRouting: other }\n`,
      'simulator.receiptRouting: must be one of same, any, other-system-type'],
    ['bad defaultAlphabet', `${base}    defaultAlphabet: utf8\n`, 'upstreams[0].defaultAlphabet: must be one of gsm7, latin1, ascii'],
    ['bad longMessages', `${base}    longMessages: split\n`, 'upstreams[0].longMessages: must be one of udh, sar, payload'],
    ['bad udhReference', `${base}    udhReference: 12\n`, 'upstreams[0].udhReference: must be 8 or 16'],
    ['maxParts 0', `${base}    maxParts: 0\n`, 'upstreams[0].maxParts: must be a whole number from 1 to 255'],
    ['bad receiptIdFormat', `${base}    receiptIdFormat: octal\n`, 'upstreams[0].receiptIdFormat: must be one of auto, same, hex, decimal'],
    ['bad smscTimeZone', `${base}    smscTimeZone: Mars/Olympus\n`, 'upstreams[0].smscTimeZone: must be UTC, an offset like +04:00, or an IANA zone'],
    ['offset out of range', `${base}    smscTimeZone: "+25:00"\n`, 'upstreams[0].smscTimeZone: must be UTC, an offset like +04:00'],
    ['requestReceipts not a flag', `${base}    requestReceipts: yes please\n`, 'upstreams[0].requestReceipts: must be true or false'],
    ['parkedReceipts not a mapping', `${base}    parkedReceipts: 5\n`, 'upstreams[0].parkedReceipts: must be a mapping { max, maxAgeSeconds }'],
    ['parkedReceipts.max 0', `${base}    parkedReceipts: { max: 0 }\n`, 'upstreams[0].parkedReceipts.max: must be a whole number from 1 to 10000000'],
    ['parkedReceipts.maxAgeSeconds over a week', `${base}    parkedReceipts: { maxAgeSeconds: 604801 }\n`,
      'upstreams[0].parkedReceipts.maxAgeSeconds: must be a whole number from 1 to 604800'],
    ['parkedReceipts.maxAgeSeconds shorter than a late response', `${base}    responseTimeoutSeconds: 30\n    parkedReceipts: { maxAgeSeconds: 59 }\n`,
      'upstreams[0].parkedReceipts.maxAgeSeconds: must be ≥ 2 × responseTimeoutSeconds (60): a receipt may come before a late submit_sm_resp'],
    ['parkedReceipts.maxAgeSeconds shorter than a postgres lease', `${base}    parkedReceipts: { maxAgeSeconds: 300 }\nstore: { kind: postgres, url: "postgres://db/smppd", leaseSeconds: 600 }\n`,
      'upstreams[0].parkedReceipts.maxAgeSeconds: must be ≥ store.leaseSeconds (600) with store kind postgres'],
    ['maxPendingDeliveries 0', `${base}    maxPendingDeliveries: 0\n`, 'upstreams[0].maxPendingDeliveries: must be a whole number from 1 to 100000'],
    ['negative log.warningIntervalSeconds', `${base}log: { warningIntervalSeconds: -1 }\n`, 'log.warningIntervalSeconds: must be a whole number from 0 to 86400'],
    ['http.listen without a port', `${base}http: { listen: localhost }\n`,
      'http.listen: must be host:port, e.g. 127.0.0.1:8080 or [::1]:8080, with a port of 0–65535'],
    ['http.listen port out of range', `${base}http: { listen: "127.0.0.1:70000" }\n`, 'http.listen: must be host:port'],
    ['http.listen IPv6 without brackets', `${base}http: { listen: "::1:8080" }\n`, 'http.listen: must be host:port'],
    ['http.maxBodyBytes too small', `${base}http: { maxBodyBytes: 10 }\n`, 'http.maxBodyBytes: must be a whole number from 1024 to 67108864'],
    ['http.maxUploadBytes not whole', `${base}http: { maxUploadBytes: 1.5 }\n`, 'http.maxUploadBytes: must be a whole number from 1024 to 4294967296'],
    ['http.maxResendDays 0', `${base}http: { maxResendDays: 0 }\n`, 'http.maxResendDays: must be a whole number from 1 to 366'],
    ['http.idempotencyHours 0', `${base}http: { idempotencyHours: 0 }\n`, 'http.idempotencyHours: must be a whole number from 1 to 168'],
    ['unknown key in http', `${base}http: { port: 8080 }\n`, 'http.port: unknown key'],
    ['clients not a list', `${base}clients: { name: a }\n`, 'clients: must be a list of clients'],
    ['client without a name', `${base}clients: [{ token: ${TOKEN} }]\n`, 'clients[0].name: is required'],
    ['bad client name', `${base}clients: [{ name: "a b", token: ${TOKEN} }]\n`, 'clients[0].name: must be 1–64 letters, digits, _ . @ or -'],
    ['client with token and tokenFile', `${base}clients: [{ name: a, token: ${TOKEN}, tokenFile: t }]\n`, 'clients[0].token: give token or tokenFile, not both'],
    ['client without token or tokenFile', `${base}clients: [{ name: a }]\n`, 'clients[0].token: one of token or tokenFile is required'],
    ['token too short', `${base}clients: [{ name: a, token: short-token }]\n`, 'clients[0].token: must be at least 16 characters'],
    ['token as a YAML number', `${base}clients: [{ name: a, token: 12345678901234567890 }]\n`, 'clients[0].token: must be a string: put it in quotes'],
    ['duplicate client names', `${base}clients: [{ name: a, token: ${TOKEN} }, { name: a, token: ${TOKEN}2 }]\n`, 'clients[1].name: duplicates clients[0].name'],
    ['the same token for two clients', `${base}clients: [{ name: a, token: ${TOKEN} }, { name: b, token: ${TOKEN} }]\n`,
      'clients[1].token: the same token as clients[0]; each client needs its own'],
    ['unknown key in a client', `${base}clients: [{ name: a, token: ${TOKEN}, sender: x }]\n`, 'clients[0].sender: unknown key'],
    ['senders empty', `${base}clients: [{ name: a, token: ${TOKEN}, senders: [] }]\n`,
      'clients[0].senders: must list at least one sender ID; leave senders out to allow any'],
    ['senders not a list', `${base}clients: [{ name: a, token: ${TOKEN}, senders: MyBrand }]\n`, 'clients[0].senders: must be a list of sender IDs'],
    ['sender too long', `${base}clients: [{ name: a, token: ${TOKEN}, senders: [abcdefghijklmnopqrstu] }]\n`,
      'clients[0].senders[0]: is 21 characters; an alphanumeric sender ID is at most 11 (GSM 03.40 TP-OA)'],
    ['sender with a NUL', `${base}clients: [{ name: a, token: ${TOKEN}, senders: ["AB\\0C"] }]\n`, 'clients[0].senders[0]: must not hold U+0000; a sender ID is a short code'],
    ['sender with a character SMPP cannot carry', `${base}clients: [{ name: a, token: ${TOKEN}, senders: [MyBrand, "Zaż"] }]\n`, 'clients[0].senders[1]: must not hold U+017C'],
    ['sender in national format', `${base}clients: [{ name: a, token: ${TOKEN}, senders: ["07700900123"] }]\n`, 'clients[0].senders[0]: starts with 0; a numeric sender ID is'],
    ['sender of signs and digits', `${base}clients: [{ name: a, token: ${TOKEN}, senders: ["+4477009001"] }]\n`, 'clients[0].senders[0]: has no letter'],
    ['sender as a YAML number', `${base}clients: [{ name: a, token: ${TOKEN}, senders: [447700900000] }]\n`, 'clients[0].senders[0]: must be a string: put it in quotes'],
    ['systemId with a NUL', base.replace('smppclient1', '"smpp\\0x"'), 'upstreams[0].systemId: must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character 5 is not'],
    ['systemType past Latin-1', `${base}    systemType: "Ā"\n`, 'upstreams[0].systemType: must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character 1 is not'],
    ['addressRange with a control character', `${base}    addressRange: "44\\t7"\n`, 'upstreams[0].addressRange: must hold only printable ASCII or Latin-1 characters'],
    ['sourceAddress TON out of range', `${base}    sourceAddress: { shortCode: { ton: 256 } }\n`, 'upstreams[0].sourceAddress.shortCode.ton: must be a whole number from 0 to 255'],
    ['sourceAddress of an unknown kind', `${base}    sourceAddress: { numeric: { ton: 1, npi: 1 } }\n`, 'upstreams[0].sourceAddress.numeric: unknown key'],
    ['rateLimit without perSecond', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { burst: 5 } }]\n`, 'clients[0].rateLimit.perSecond: is required'],
    ['rateLimit.perSecond 0', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { perSecond: 0 } }]\n`,
      'clients[0].rateLimit.perSecond: must be a number of sends per second > 0'],
    ['rateLimit.perSecond too high', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { perSecond: 2000000 } }]\n`,
      'clients[0].rateLimit.perSecond: must be at most 1000000'],
    ['rateLimit.burst 0', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { perSecond: 5, burst: 0 } }]\n`,
      'clients[0].rateLimit.burst: must be a whole number from 1 to 1000000'],
    ['rateLimit.burst fractional', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { perSecond: 5, burst: 1.5 } }]\n`,
      'clients[0].rateLimit.burst: must be a whole number from 1 to 1000000'],
    ['rateLimit not a mapping', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: 5 }]\n`, 'clients[0].rateLimit: must be a mapping { perSecond, burst }'],
    ['unknown key in rateLimit', `${base}clients: [{ name: a, token: ${TOKEN}, rateLimit: { perMinute: 5 } }]\n`, 'clients[0].rateLimit.perMinute: unknown key'],
    ['unreadable tokenFile', `${base}clients: [{ name: a, tokenFile: nope-token }]\n`, `clients[0].tokenFile: cannot read the file (relative to ${dir}): ENOENT`],
    ['store.path empty', `${base}store: { path: "" }\n`, 'store.path: must not be empty'],
    ['store.fsync not a flag', `${base}store: { fsync: always }\n`, 'store.fsync: must be true or false'],
    ['store.thread not known', `${base}store: { thread: both }\n`, 'store.thread: must be one of'],
    ['unknown key in store', `${base}store: { file: x.db }\n`, 'store.file: unknown key'],
    ['limits.maxQueued 0', `${base}limits: { maxQueued: 0 }\n`, 'limits.maxQueued: must be a whole number from 1 to 1000000000'],
    ['http.maxBulkNumbers 0', `${base}http: { maxBulkNumbers: 0 }\n`, 'http.maxBulkNumbers: must be a whole number from 1 to 50000000'],
    ['http.maxConcurrentUploads 0', `${base}http: { maxConcurrentUploads: 0 }\n`, 'http.maxConcurrentUploads: must be a whole number from 1 to 1000'],
    ['http.maxConcurrentUploads 1001', `${base}http: { maxConcurrentUploads: 1001 }\n`, 'http.maxConcurrentUploads: must be a whole number from 1 to 1000'],
    ['client maxQueued 0', `${base}clients: [{ name: a, token: ${TOKEN}, maxQueued: 0 }]\n`, 'clients[0].maxQueued: must be a whole number from 1 to 1000000000'],
    ['client maxQueued not a number', `${base}clients: [{ name: a, token: ${TOKEN}, maxQueued: lots }]\n`, 'clients[0].maxQueued: must be a whole number from 1 to 1000000000'],
    ['client weight 0', `${base}clients: [{ name: a, token: ${TOKEN}, weight: 0 }]\n`, 'clients[0].weight: must be a whole number from 1 to 1000'],
    ['client weight a fraction', `${base}clients: [{ name: a, token: ${TOKEN}, weight: 1.5 }]\n`, 'clients[0].weight: must be a whole number from 1 to 1000'],
    ['bad YAML syntax gives the line', 'upstreams:\n  - name: a\n    host: [unclosed\n', 'invalid YAML in config:\nconfig:4:1: '],
    ['a key twice in YAML gives the line', `${base}    host: other\n`, 'config:6:5: Map keys must be unique'],
  ];
  for (const [name, yaml, expected] of cases) {
    it(name, async () => {
      const message = await problem(yaml);
      expect(message).toContain(expected);
      expect(message).not.toContain(SECRET);
    });
  }

  it('lists every problem at once, one per line, schema and files together', async () => {
    const message = await problem(`${base}    binds: 0\n    window: 0\n    tls: { ca: nope.pem }\n${second.replace('provider', 'b')}    bindMode: x\n`);
    expect(message.split('\n').slice(1)).toEqual([
      'upstreams[0].binds: must be a whole number from 1 to 64',
      'upstreams[0].window: must be a whole number from 1 to 10000',
      'upstreams[1].bindMode: must be one of transceiver, transmitter, receiver',
      `upstreams[0].tls.ca: cannot read ${join(dir, 'nope.pem')}: ENOENT`,
    ]);
  });

  it('keeps the list of problems in details', async () => {
    const e: unknown = await parseConfig(`${base}    binds: 0\n`, dir).catch((err: unknown) => err);
    expect(isSmppdError(e, 'CONFIG_INVALID') && e.details).toEqual({ problems: ['upstreams[0].binds: must be a whole number from 1 to 64'] });
  });

  it('an unreadable config file is CONFIG_UNREADABLE and names the file', async () => {
    const path = join(dir, 'nope.yaml');
    expect(await refusal(loadConfigFile(path), 'CONFIG_UNREADABLE')).toBe(`cannot read config ${path}: ENOENT`);
  });

  it('names the file in messages when loaded from a file', async () => {
    const path = join(dir, 'broken.yaml');
    writeFileSync(path, `${base}    binds: 0\n`);
    expect(await refusal(loadConfigFile(path))).toBe(`invalid configuration in ${path}:\nupstreams[0].binds: must be a whole number from 1 to 64`);
    writeFileSync(path, 'upstreams: [\n');
    expect(await refusal(loadConfigFile(path))).toMatch(new RegExp(`^invalid YAML in ${path}:\n${path}:2:1: `));
  });
});

describe('text, segmentation and receipt keys', () => {
  it('accepts every documented value', async () => {
    const c = await parseConfig(`${base}    defaultAlphabet: latin1\n    nationalLanguageShift: true\n    longMessages: sar\n    udhReference: 16\n`
      + `    maxParts: 255\n    receiptIdFormat: hex\n    smscTimeZone: Asia/Dubai\n    requestReceipts: false\n`, dir);
    expect(c.upstreams[0]).toMatchObject({
      defaultAlphabet: 'latin1', nationalLanguageShift: true, longMessages: 'sar', udhReference: 16, maxParts: 255,
      receiptIdFormat: 'hex', smscTimeZone: 'Asia/Dubai', requestReceipts: false,
    });
    for (const zone of ['"+04:00"', '"-05:30"', 'UTC', 'Europe/Berlin']) {
      const z = await parseConfig(`${base}    smscTimeZone: ${zone}\n`, dir);
      expect(z.upstreams[0]!.smscTimeZone).toBe(zone.replace(/"/g, ''));
    }
  });
});

describe('defaults', () => {
  it('applies every default', async () => {
    const c = await parseConfig(base, dir);
    expect(c.log).toEqual({ level: 'info', warningIntervalSeconds: 60 });
    expect(c.shutdown).toEqual({ drainSeconds: 10 });
    expect(c.simulator).toBeUndefined();
    expect(c.http).toEqual({
      listen: '127.0.0.1:8080', host: '127.0.0.1', port: 8080, maxBodyBytes: 1_048_576, maxUploadBytes: 52_428_800, maxBulkNumbers: 1_000_000, maxConcurrentUploads: 16, maxResendDays: 7, idempotencyHours: 24,
      headersTimeoutSeconds: 10, requestTimeoutSeconds: 30, bulkRequestTimeoutSeconds: 600, keepAliveTimeoutSeconds: 5, maxConnections: 1000, maxConnectionsPerAddress: 0,
    });
    expect(c.clients).toEqual([]);
    expect(c.store).toEqual({ kind: 'sqlite', path: join(dir, 'smppd.db'), fsync: false, thread: 'worker', retentionDays: 30 });
    expect(c.limits).toEqual({ maxQueued: 100_000 });
    expect(c.upstreams[0]).toEqual({
      name: 'provider', host: '127.0.0.1', port: 2775, tls: false, systemId: 'smppclient1', password: SECRET, systemType: '',
      bindMode: 'transceiver', addressRange: '', addrTon: 0, addrNpi: 0, binds: 1, window: 100, ratePerBind: 1000, burst: 20,
      enquireLinkSeconds: 30, responseTimeoutSeconds: 10, connectTimeoutSeconds: 10, failoverAfterSeconds: 10, onUncertain: 'resend',
      accountRate: 0,
      reconnect: { initialSeconds: 1, maxSeconds: 60 }, throttle: { pauseSeconds: 0, minRatePerBind: 10, backoffPercent: 3, probePercentPerSecond: 1 },
      retry: { maxAttempts: 5, initialSeconds: 1, maxSeconds: 30 }, commandStatus: {},
      defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10,
      receiptIdFormat: 'auto', smscTimeZone: 'UTC', requestReceipts: true,
      sourceAddress: { alphanumeric: { ton: 5, npi: 0 }, international: { ton: 1, npi: 1 }, shortCode: { ton: 3, npi: 0 } },
      parkedReceipts: { max: 50_000, maxAgeSeconds: 3_600 }, maxPendingDeliveries: 1_000, requireRegulatory: false,
    });
    expect(c.routes).toEqual([{ name: 'default', prefixes: [''], upstreams: ['provider'], strategy: 'failover', weights: [1] }]);
    expect(c.routesConfigured).toBe(false);
  });

  it('fills the rest of a partly given section', async () => {
    const c = await parseConfig(`${base}    reconnect: { maxSeconds: 5 }\n    retry: { maxAttempts: 2 }\n    throttle: { pauseSeconds: 0.5 }\n`, dir);
    expect(c.upstreams[0]).toMatchObject({
      reconnect: { initialSeconds: 1, maxSeconds: 5 },
      retry: { maxAttempts: 2, initialSeconds: 1, maxSeconds: 30 },
      throttle: { pauseSeconds: 0.5, minRatePerBind: 10, backoffPercent: 3, probePercentPerSecond: 1 },
    });
  });

  it('derives burst from ratePerBind unless given', async () => {
    const at = async (extra: string) => (await parseConfig(`${base}${extra}`, dir)).upstreams[0]!;
    expect(await at('    ratePerBind: 120\n')).toMatchObject({ burst: 3 });
    expect(await at('    ratePerBind: 0\n')).toMatchObject({ burst: 1 });
    expect(await at('    ratePerBind: 5\n')).toMatchObject({ burst: 1 });
    expect(await at('    burst: 7\n')).toMatchObject({ burst: 7 });
  });

  it('names the throttle key that replaced recoverPerSecond', async () => {
    await expect(parseConfig(`${base}    throttle: { recoverPerSecond: 3 }\n`, dir)).rejects.toThrow(/upstreams\[0\]\.throttle\.recoverPerSecond: was replaced by probePercentPerSecond/);
    await expect(parseConfig(`${base}    throttle: { backoffPercent: 60 }\n`, dir)).rejects.toThrow(/upstreams\[0\]\.throttle\.backoffPercent: must be a number from 0.1 to 50/);
    await expect(parseConfig(`${base}    accountRate: -1\n`, dir)).rejects.toThrow(/upstreams\[0\]\.accountRate: must be a number ≥ 0/);
  });

  it('an empty simulator section is disabled with its defaults', async () => {
    const c = await parseConfig(`${base}simulator: {}\n`, dir);
    expect(c.simulator).toEqual({
      enabled: false, host: '127.0.0.1', port: 2775, systemId: '', password: '', deliveryReceiptDelayMs: 500, receiptRouting: 'same',
    });
  });

  it('takes each of the simulator\'s receipt routings for simulator.receiptRouting', async () => {
    expect(SIMULATOR_RECEIPT_ROUTINGS).toEqual(RECEIPT_ROUTINGS);
    for (const routing of RECEIPT_ROUTINGS) {
      const c = await parseConfig(`${base}simulator: { receiptRouting: ${routing} }\n`, dir);
      expect(c.simulator?.receiptRouting).toBe(routing);
    }
  });

  it('parses commandStatus codes given in hex or decimal', async () => {
    const c = await parseConfig(`${base}    commandStatus: { "0x400": retry, "1025": reject, "0X0402": ok }\n`, dir);
    expect(c.upstreams[0]!.commandStatus).toEqual({ 0x400: 'retry', 1025: 'reject', 0x402: 'ok' });
  });
});

describe('http, clients, store and limits', () => {
  it('splits http.listen into host and port, IPv6 in brackets', async () => {
    const at = async (listen: string) => (await parseConfig(`${base}http: { listen: "${listen}" }\n`, dir)).http;
    expect(await at('0.0.0.0:80')).toMatchObject({ listen: '0.0.0.0:80', host: '0.0.0.0', port: 80 });
    expect(await at('[::1]:8443')).toMatchObject({ host: '::1', port: 8443 });
    expect(await at('localhost:0')).toMatchObject({ host: 'localhost', port: 0 });
  });

  it('keeps clients with their senders; senders absent means any', async () => {
    const c = await parseConfig(`${base}clients:\n  - { name: a, token: ${TOKEN}, senders: [MyBrand, "447700900000"] }\n  - { name: b, token: ${TOKEN}b }\n`, dir);
    expect(c.clients).toEqual([{ name: 'a', token: TOKEN, senders: ['MyBrand', '447700900000'], weight: 1 }, { name: 'b', token: `${TOKEN}b`, weight: 1 }]);
  });

  it('keeps a client\'s maxQueued and weight; without maxQueued it has no cap of its own, without weight weight 1', async () => {
    const c = await parseConfig(`${base}clients:\n  - { name: a, token: ${TOKEN}, maxQueued: 20000, weight: 3 }\n  - { name: b, token: ${TOKEN}b }\n`, dir);
    expect(c.clients).toEqual([{ name: 'a', token: TOKEN, maxQueued: 20_000, weight: 3 }, { name: 'b', token: `${TOKEN}b`, weight: 1 }]);
    expect(c.clients[1]).not.toHaveProperty('maxQueued');
  });

  it('keeps a client\'s rateLimit; burst defaults to one second\'s worth, at least 1', async () => {
    const c = await parseConfig(`${base}clients:
  - { name: a, token: ${TOKEN}, rateLimit: { perSecond: 50, burst: 200 } }
  - { name: b, token: ${TOKEN}b, rateLimit: { perSecond: 2.5 } }
  - { name: c, token: ${TOKEN}c, rateLimit: { perSecond: 0.2 } }
  - { name: d, token: ${TOKEN}d }
`, dir);
    expect(c.clients.map((x) => x.rateLimit)).toEqual([{ perSecond: 50, burst: 200 }, { perSecond: 2.5, burst: 3 }, { perSecond: 0.2, burst: 1 }, undefined]);
  });

  it('store kind postgres: url or urlFile (read and trimmed, a secret), schema and lease defaults; sqlite refuses a url', async () => {
    expect((await parseConfig(`${base}store: { kind: postgres, url: "postgres://smppd:pw@db:5432/smppd" }\n`, dir)).store)
      .toEqual({ kind: 'postgres', url: 'postgres://smppd:pw@db:5432/smppd', schema: 'smppd', leaseSeconds: 300, instanceId: hostname(), retentionDays: 30 });
    writeFileSync(join(dir, 'pg.url'), 'postgres://smppd:secretpw@db/smppd\n');
    expect((await parseConfig(`${base}store: { kind: postgres, urlFile: pg.url, schema: shop_1, leaseSeconds: 60 }\n`, dir)).store)
      .toEqual({ kind: 'postgres', url: 'postgres://smppd:secretpw@db/smppd', schema: 'shop_1', leaseSeconds: 60, instanceId: hostname(), retentionDays: 30 });
    expect(await problem(`${base}store: { kind: postgres }\n`)).toContain('store.url: one of url or urlFile is required with kind: postgres');
    expect(await problem(`${base}store: { kind: postgres, url: "mysql://x" }\n`)).toContain('store.url: must be a postgres:// URL');
    expect(await problem(`${base}store: { url: "postgres://x" }\n`)).toContain('store.url: is for kind: postgres; this store is sqlite');
    expect(await problem(`${base}store: { kind: postgres, url: "postgres://x", schema: "Bad-Name" }\n`)).toContain('store.schema: must be a lower-case SQL name (a-z, 0-9, _)');
  });

  it('store.retentionDays: whole days, default 30, 0 keeps everything, for either kind; anything else is refused naming the key', async () => {
    expect((await parseConfig(`${base}store: { retentionDays: 0 }\n`, dir)).store.retentionDays).toBe(0);
    expect((await parseConfig(`${base}store: { retentionDays: 400 }\n`, dir)).store.retentionDays).toBe(400);
    expect((await parseConfig(`${base}store: { kind: postgres, url: "postgres://x", retentionDays: 7 }\n`, dir)).store.retentionDays).toBe(7);
    for (const bad of ['-1', '1.5', '"30"', '3651', 'forever']) {
      expect(await problem(`${base}store: { retentionDays: ${bad} }\n`), bad).toContain('store.retentionDays: must be a whole number from 0 to 3650');
    }
  });

  it('check-config masks a postgres URL down to its scheme and host', async () => {
    const c = await parseConfig(`${base}store: { kind: postgres, url: "postgres://smppd:pgsecretpw@db.internal:5432/smppd" }\n`, dir);
    const masked = JSON.stringify(maskSecrets(c));
    expect(masked).toContain('"url":"postgres://db.internal:5432/***"');
    expect(masked).not.toContain('pgsecretpw');
  });

  it('resolves store.path against the config folder; an absolute path and :memory: stay', async () => {
    expect((await parseConfig(`${base}store: { path: data/x.db, fsync: true }\n`, dir)).store).toEqual({ kind: 'sqlite', path: join(dir, 'data', 'x.db'), fsync: true, thread: 'worker', retentionDays: 30 });
    expect(sqliteStore(await parseConfig(`${base}store: { path: /var/lib/smppd/x.db }\n`, dir)).path).toBe('/var/lib/smppd/x.db');
    expect(sqliteStore(await parseConfig(`${base}store: { path: ":memory:" }\n`, dir)).path).toBe(':memory:');
  });

  it('records: absent writes none; its path resolves against the config folder; path is required and alone', async () => {
    expect((await parseConfig(base, dir)).records).toBeUndefined();
    expect((await parseConfig(`${base}records: { path: log/records.jsonl }\n`, dir)).records).toEqual({ path: join(dir, 'log', 'records.jsonl') });
    expect((await parseConfig(`${base}records: { path: /var/log/smppd/records.jsonl }\n`, dir)).records).toEqual({ path: '/var/log/smppd/records.jsonl' });
    expect(await problem(`${base}records: {}\n`)).toContain('records.path: is required');
    expect(await problem(`${base}records: { path: "" }\n`)).toContain('records.path: must not be empty');
    expect(await problem(`${base}records: { path: r.jsonl, rotate: daily }\n`)).toContain('records.rotate: unknown key');
    expect(await problem(`${base}records: r.jsonl\n`)).toContain('records: must be a mapping');
  });
});

describe('files named by the config', () => {
  it('reads tokenFile relative to the config, trims one newline, and drops the key', async () => {
    writeFileSync(join(dir, 'app.token'), `${TOKEN}\n`);
    const c = await parseConfig(`${base}clients: [{ name: a, tokenFile: app.token }]\n`, dir);
    expect(c.clients).toEqual([{ name: 'a', token: TOKEN, weight: 1 }]);
  });

  it('refuses a short token in a file, and a file token equal to another client’s, without quoting either', async () => {
    writeFileSync(join(dir, 'short.token'), 'shorttoken\n');
    writeFileSync(join(dir, 'same.token'), `${TOKEN}\n`);
    const message = await problem(`${base}clients:\n  - { name: a, tokenFile: short.token }\n  - { name: b, token: ${TOKEN} }\n  - { name: c, tokenFile: same.token }\n`);
    expect(message).toContain('clients[0].tokenFile: the token in the file must be at least 16 characters');
    expect(message).toContain('clients[2].tokenFile: the same token as clients[1]; each client needs its own');
    expect(message).not.toContain('shorttoken');
    expect(message).not.toContain(TOKEN);
  });

  it('never names a tokenFile path in a message: it may be the token typed in the wrong key', async () => {
    const message = await problem(`${base}clients: [{ name: a, tokenFile: ${TOKEN} }]\n`);
    expect(message).toContain('clients[0].tokenFile: cannot read the file');
    expect(message).not.toContain(TOKEN);
  });

  it('reads passwordFile relative to the config and trims one trailing newline', async () => {
    writeFileSync(join(dir, 'pw'), 'fromfile\n');
    writeFileSync(join(dir, 'pw-crlf'), 'crlf\r\n');
    writeFileSync(join(dir, 'pw-raw'), ' raw ');
    const at = async (file: string) => (await parseConfig(base.replace(`password: ${SECRET}`, `passwordFile: ${file}`), dir)).upstreams[0]!;
    expect((await at('pw')).password).toBe('fromfile');
    expect((await at('pw-crlf')).password).toBe('crlf');
    expect((await at(join(dir, 'pw-raw'))).password).toBe(' raw ');
    expect(await at('pw')).not.toHaveProperty('passwordFile');
  });

  it('resolves relative paths against the config file’s folder', async () => {
    const sub = join(dir, 'etc');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'secret'), 'insub\n');
    writeFileSync(join(sub, 'ca.pem'), 'CA');
    writeFileSync(join(sub, 'smppd.yaml'), `${base.replace(`password: ${SECRET}`, 'passwordFile: secret')}    tls: { ca: ca.pem }\n`);
    const c = await loadConfigFile(join(sub, 'smppd.yaml'));
    expect(c.upstreams[0]!.password).toBe('insub');
    expect(c.upstreams[0]!.tls && c.upstreams[0]!.tls.ca?.toString()).toBe('CA');
  });

  it('refuses a password file longer than the SMPP limit, without quoting it', async () => {
    writeFileSync(join(dir, 'pw-long'), 'longsecretvalue\n');
    const message = await problem(`${base.replace(`password: ${SECRET}`, 'passwordFile: pw-long')}    binds: 0\n`);
    expect(message).toContain('upstreams[0].passwordFile: the password in the file must be at most 8 characters');
    expect(message).toContain('upstreams[0].binds: must be a whole number from 1 to 64');
    expect(message).not.toContain('longsecretvalue');
  });

  it('refuses a password file with a character a bind PDU cannot carry, without quoting it', async () => {
    writeFileSync(join(dir, 'pw-nul'), 'pw\0x\n');
    const message = await problem(base.replace(`password: ${SECRET}`, 'passwordFile: pw-nul'));
    expect(message).toContain('upstreams[0].passwordFile: the password in the file must hold only printable ASCII or Latin-1 characters (SMPP v3.4 C-Octet String); character 3 is not');
    expect(message).not.toContain('pw\0x');
  });

  it('reads TLS files into Buffers and keeps servername and rejectUnauthorized', async () => {
    writeFileSync(join(dir, 'ca.pem'), 'CA');
    writeFileSync(join(dir, 'cert.pem'), 'CERT');
    writeFileSync(join(dir, 'key.pem'), 'KEY\n');
    const c = await parseConfig(`${base}    tls: { ca: ca.pem, cert: cert.pem, key: key.pem, servername: smsc.example, rejectUnauthorized: false }\n`, dir);
    const tls = c.upstreams[0]!.tls;
    if (tls === false) throw new Error('expected TLS');
    expect(tls.ca?.toString()).toBe('CA');
    expect(tls.cert?.toString()).toBe('CERT');
    expect(tls.key?.toString()).toBe('KEY\n');
    expect(tls).toMatchObject({ servername: 'smsc.example', rejectUnauthorized: false });
  });

  it('tls: {} is TLS with the defaults', async () => {
    const c = await parseConfig(`${base}    tls: {}\n`, dir);
    expect(c.upstreams[0]!.tls).toEqual({ rejectUnauthorized: true });
  });

  it('reads the simulator passwordFile when the simulator is enabled', async () => {
    writeFileSync(join(dir, 'sim-pw'), 'simpw\n');
    const c = await parseConfig(`${base}simulator: { enabled: true, systemId: sim, passwordFile: sim-pw }\n`, dir);
    expect(c.simulator).toMatchObject({ enabled: true, systemId: 'sim', password: 'simpw' });
  });
});

describe('secrets stay out of messages and printouts', () => {
  const secretBearing: Array<[string, string]> = [
    ['unknown key beside the password', `${base}    pasword: ${SECRET}\n`],
    ['password given twice', `${base}    passwordFile: ${SECRET}\n`],
    ['the password typed into passwordFile', base.replace(`password: ${SECRET}`, `passwordFile: ${SECRET}`)],
    ['the password typed into the simulator passwordFile', `${base}simulator: { enabled: true, systemId: s, passwordFile: ${SECRET} }\n`],
    ['password too long', base.replace(SECRET, `${SECRET}${SECRET}`)],
    ['password of the wrong type', base.replace(SECRET, `[${SECRET}]`)],
    ['simulator password too long', `${base}simulator: { enabled: true, systemId: s, password: ${SECRET}${SECRET} }\n`],
    ['unclosed quote in the password', base.replace(SECRET, `"${SECRET}`)],
    ['stray text after the password', base.replace(SECRET, `"${SECRET}" x`)],
    ['flow mapping around the password', base.replace(SECRET, `{ ${SECRET}`)],
  ];
  for (const [name, yaml] of secretBearing) {
    it(name, async () => {
      expect(await problem(yaml)).not.toContain(SECRET);
    });
  }

  it('token errors never quote the token', async () => {
    for (const yaml of [`${base}clients: [{ name: a, token: ${SECRET} }]\n`, `${base}clients: [{ name: a, token: ${TOKEN}, tokn: ${TOKEN} }]\n`,
      `${base}clients: [{ name: a, token: ${TOKEN} }, { name: b, token: ${TOKEN} }]\n`]) {
      const message = await problem(yaml);
      expect(message).not.toContain(SECRET);
      expect(message).not.toContain(TOKEN);
    }
  });

  it('maskSecrets hides client tokens', async () => {
    const c = await parseConfig(`${base}clients: [{ name: a, token: ${TOKEN}, senders: [X] }]\n`, dir);
    const masked = maskSecrets(c);
    expect(JSON.stringify(masked)).not.toContain(TOKEN);
    expect(masked).toMatchObject({ clients: [{ name: 'a', token: '***', senders: ['X'] }] });
  });

  it('maskSecrets hides passwords and describes file contents by size', async () => {
    writeFileSync(join(dir, 'ca2.pem'), 'SECRETCA');
    const c = await parseConfig(`${base}    tls: { ca: ca2.pem }\nsimulator: { enabled: true, systemId: s, password: simpw }\n`, dir);
    const masked = maskSecrets(c);
    const printed = JSON.stringify(masked);
    expect(printed).not.toContain(SECRET);
    expect(printed).not.toContain('simpw');
    expect(printed).not.toContain('SECRETCA');
    expect(masked).toMatchObject({
      simulator: { password: '***', systemId: 's' },
      upstreams: [{ password: '***', systemId: 'smppclient1', tls: { ca: '<8 bytes>', rejectUnauthorized: true } }],
    });
    expect(c.upstreams[0]!.password).toBe(SECRET); // the config itself is untouched
  });
});

describe('the shipped configurations', () => {
  const shipped = (name: string) => fileURLToPath(new URL(`../../../config/${name}`, import.meta.url));

  it('the demo config runs the simulator and one upstream to it', async () => {
    const c = await loadConfigFile(shipped('smppd.yaml'));
    expect(c.simulator).toMatchObject({ enabled: true, host: '127.0.0.1', port: 2775, systemId: 'smppclient1', password: 'password' });
    expect(c.upstreams).toHaveLength(1);
    expect(c.upstreams[0]).toMatchObject({ name: 'demo', host: '127.0.0.1', port: 2775, tls: false, binds: 2, systemId: 'smppclient1', password: 'password' });
    expect(c.http).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(c.clients).toEqual([{ name: 'demo', token: 'demo-token-change-me', weight: 1 }]);
    expect(sqliteStore(c).path).toBe(fileURLToPath(new URL('../../../smppd-demo.db', import.meta.url)));
  });

  it('the example config loads and matches the defaults it documents', async () => {
    const c = await loadConfigFile(shipped('smppd.example.yaml'));
    const defaults = await parseConfig(`upstreams:\n  - name: provider\n    host: smpp.example.net\n    systemId: smppclient1\n    password: changeme\n`, dir);
    expect(c.upstreams).toEqual(defaults.upstreams);
    expect(c.log).toEqual(defaults.log);
    expect(c.shutdown).toEqual(defaults.shutdown);
    expect(c.simulator?.enabled).toBe(false);
    expect(c.http).toEqual(defaults.http);
    expect(c.limits).toEqual(defaults.limits);
    expect(c.store).toEqual({ ...defaults.store, path: shipped('smppd.db') });
    expect(c.clients).toEqual([{ name: 'app', token: 'change-me-to-a-long-random-token', senders: ['MyBrand', '447700900000'], weight: 1 }]);
  });
});
