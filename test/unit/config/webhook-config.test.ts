import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, maskSecrets, parseConfig } from '../../../src/config/load.js';
import { configRefusal } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-webhook-config-'));
const PASSWORD = 's3cr3tpw';
const TOKEN = 'tok-0123456789abcdef';
const HOOK_SECRET = 'hook-secret-0123456789';
/** A token in the URL's query: a message must never carry it. */
const URL_TOKEN = 'urltok-9f8e7d6c5b4a';
const URL = `https://hooks.example.com/smppd?key=${URL_TOKEN}`;
const HTTP_URL = URL.replace('https:', 'http:');
const base = `upstreams:
  - name: provider
    host: 127.0.0.1
    systemId: smppclient1
    password: ${PASSWORD}
`;
/** `base` plus one client `shop` carrying `extra` (flow-mapping entries). */
const withClient = (extra: string): string => `${base}clients: [{ name: shop, token: ${TOKEN}, ${extra} }]\n`;
const withHook = (hook: string): string => withClient(`webhook: { ${hook} }`);

const problem = (yaml: string): Promise<string> => configRefusal(() => parseConfig(yaml, dir));

function expectNoSecretIn(message: string): void {
  for (const secret of [PASSWORD, TOKEN, HOOK_SECRET, URL_TOKEN, 'hooks.example.com']) expect(message).not.toContain(secret);
}

describe('a bad webhook or inbound routing key is refused with its key path and the reason', () => {
  writeFileSync(join(dir, 'short.secret'), 'shortsecret\n');
  const cases: Array<[string, string, string]> = [
    ['webhook not a mapping', withClient(`webhook: "${URL}"`),
      'clients[0].webhook: must be a mapping { url, secret or secretFile, allowHttp, timeoutSeconds, concurrency, retry, maxAgeHours, ca }'],
    ['webhook without url', withClient('webhook: {}'), 'clients[0].webhook.url: is required'],
    ['url as a YAML number', withHook('url: 5'), 'clients[0].webhook.url: must be a string: put it in quotes'],
    ['url relative', withHook(`url: "/smppd?key=${URL_TOKEN}"`), 'clients[0].webhook.url: must be an absolute https:// URL'],
    ['url not a URL', withHook(`url: "hooks.example.com/smppd?key=${URL_TOKEN}"`), 'clients[0].webhook.url: must be an absolute https:// URL'],
    ['url empty', withHook('url: ""'), 'clients[0].webhook.url: must be an absolute https:// URL'],
    ['url of another scheme', withHook(`url: "${URL.replace('https:', 'ftp:')}"`), 'clients[0].webhook.url: must be an absolute https:// URL'],
    ['url of another scheme with allowHttp', withHook(`url: "${URL.replace('https:', 'ws:')}", allowHttp: true`),
      'clients[0].webhook.url: must be an absolute https:// URL'],
    ['http url without allowHttp', withHook(`url: "${HTTP_URL}"`),
      'clients[0].webhook.url: must be an https:// URL; set allowHttp: true to allow http://'],
    ['http url with allowHttp false', withHook(`url: "${HTTP_URL}", allowHttp: false`),
      'clients[0].webhook.url: must be an https:// URL; set allowHttp: true to allow http://'],
    ['url with a fragment', withHook(`url: "${URL}#${URL_TOKEN}"`), 'clients[0].webhook.url: must not have a #fragment'],
    ['url with an empty fragment', withHook(`url: "${URL}#"`), 'clients[0].webhook.url: must not have a #fragment'],
    ['secret and secretFile', withHook(`url: "${URL}", secret: ${HOOK_SECRET}, secretFile: hook.secret`),
      'clients[0].webhook.secret: give secret or secretFile, not both'],
    ['secret too short', withHook(`url: "${URL}", secret: ${HOOK_SECRET.slice(0, 15)}`), 'clients[0].webhook.secret: must be at least 16 characters'],
    ['secret as a YAML number', withHook(`url: "${URL}", secret: 12345678901234567890`), 'clients[0].webhook.secret: must be a string: put it in quotes'],
    ['secretFile empty', withHook(`url: "${URL}", secretFile: ""`), 'clients[0].webhook.secretFile: must not be empty'],
    ['unreadable relative secretFile', withHook(`url: "${URL}", secretFile: nope.secret`),
      `clients[0].webhook.secretFile: cannot read the file (relative to ${dir}): ENOENT`],
    ['unreadable absolute secretFile', withHook(`url: "${URL}", secretFile: /nonexistent/hook.secret`),
      'clients[0].webhook.secretFile: cannot read the file: ENOENT'],
    ['secret in the file too short', withHook(`url: "${URL}", secretFile: short.secret`),
      'clients[0].webhook.secretFile: the secret in the file must be at least 16 characters'],
    ['allowHttp not a flag', withHook(`url: "${URL}", allowHttp: yes please`), 'clients[0].webhook.allowHttp: must be true or false'],
    ['timeoutSeconds 0', withHook(`url: "${URL}", timeoutSeconds: 0`), 'clients[0].webhook.timeoutSeconds: must be a number of seconds > 0'],
    ['timeoutSeconds as a string', withHook(`url: "${URL}", timeoutSeconds: "10"`), 'clients[0].webhook.timeoutSeconds: must be a number of seconds > 0'],
    ['concurrency 0', withHook(`url: "${URL}", concurrency: 0`), 'clients[0].webhook.concurrency: must be a whole number from 1 to 1000'],
    ['concurrency 1001', withHook(`url: "${URL}", concurrency: 1001`), 'clients[0].webhook.concurrency: must be a whole number from 1 to 1000'],
    ['concurrency not whole', withHook(`url: "${URL}", concurrency: 1.5`), 'clients[0].webhook.concurrency: must be a whole number from 1 to 1000'],
    ['retry not a mapping', withHook(`url: "${URL}", retry: 5`), 'clients[0].webhook.retry: must be a mapping { initialSeconds, maxSeconds }'],
    ['retry.initialSeconds 0', withHook(`url: "${URL}", retry: { initialSeconds: 0 }`),
      'clients[0].webhook.retry.initialSeconds: must be a number of seconds > 0'],
    ['retry.maxSeconds below initialSeconds', withHook(`url: "${URL}", retry: { initialSeconds: 600 }`),
      'clients[0].webhook.retry.maxSeconds: must be ≥ initialSeconds'],
    ['unknown key in retry', withHook(`url: "${URL}", retry: { factor: 2 }`), 'clients[0].webhook.retry.factor: unknown key'],
    ['maxAgeHours 0', withHook(`url: "${URL}", maxAgeHours: 0`), 'clients[0].webhook.maxAgeHours: must be a number of hours > 0'],
    ['ca empty', withHook(`url: "${URL}", ca: ""`), 'clients[0].webhook.ca: must not be empty'],
    ['unreadable ca', withHook(`url: "${URL}", ca: missing-hooks-ca.pem`), `clients[0].webhook.ca: cannot read ${join(dir, 'missing-hooks-ca.pem')}: ENOENT`],
    ['unknown key in webhook', withHook(`url: "${URL}", headers: {}`), 'clients[0].webhook.headers: unknown key'],
    ['misspelt secretFile', withHook(`url: "${URL}", secretfile: hook.secret`), 'clients[0].webhook.secretfile: unknown key'],
    ['a client not a mapping', `${base}clients: [shop]\n`,
      'clients[0]: must be a mapping { name, token or tokenFile, senders, webhook, inboundNumbers, rateLimit, maxQueued, weight }'],
    ['inboundNumbers not a list', withClient('inboundNumbers: "447700900123"'), 'clients[0].inboundNumbers: must be a list of numbers, e.g. ["447700900123"]'],
    ['inboundNumbers empty', withClient('inboundNumbers: []'), 'clients[0].inboundNumbers: must list at least one number; leave inboundNumbers out for none'],
    ['inbound number with +', withClient('inboundNumbers: ["+447700900123"]'), 'clients[0].inboundNumbers[0]: must be digits only'],
    ['inbound number with a space', withClient('inboundNumbers: ["12345", "44 7700 900123"]'), 'clients[0].inboundNumbers[1]: must be digits only'],
    ['inbound number empty', withClient('inboundNumbers: [""]'), 'clients[0].inboundNumbers[0]: must be digits only'],
    ['inbound number of 21 digits', withClient(`inboundNumbers: ["${'1'.repeat(21)}"]`), 'clients[0].inboundNumbers[0]: must be digits only, 1–20 of them'],
    ['inbound number unquoted', withClient('inboundNumbers: ["12345", 447700900123]'), 'clients[0].inboundNumbers[1]: must be a string: put it in quotes'],
    ['inbound number in two clients', `${base}clients:\n`
      + `  - { name: a, token: ${TOKEN}a, inboundNumbers: ["447700900123"] }\n`
      + `  - { name: b, token: ${TOKEN}b, inboundNumbers: ["12345"] }\n`
      + `  - { name: c, token: ${TOKEN}c, inboundNumbers: ["447700900123"] }\n`,
    'clients[2].inboundNumbers[0]: also listed by clients[0]'],
    ['inbound number twice in one client', withClient('inboundNumbers: ["12345", "12345"]'), 'clients[0].inboundNumbers[1]: also listed by clients[0]'],
    ['inboundClient naming nobody', `${withClient('senders: [X]')}`.replace(`password: ${PASSWORD}\n`, `password: ${PASSWORD}\n    inboundClient: shopp\n`),
      'upstreams[0].inboundClient: names no client'],
    ['inboundClient without any clients', `${base}    inboundClient: shop\n`, 'upstreams[0].inboundClient: names no client'],
    ['inboundClient empty', `${base}    inboundClient: ""\n`, 'upstreams[0].inboundClient: must not be empty'],
    ['inboundClient as a list', `${base}    inboundClient: [shop]\n`, 'upstreams[0].inboundClient: must be a string'],
  ];
  for (const [name, yaml, expected] of cases) {
    it(name, async () => {
      const message = await problem(yaml);
      expect(message).toContain(expected);
      expectNoSecretIn(message);
    });
  }

  it('lists every problem at once, webhook, routing and files together', async () => {
    const message = await problem(`${base}    inboundClient: nobody\nclients:\n`
      + `  - { name: a, token: ${TOKEN}a, inboundNumbers: ["12345"], webhook: { url: "${HTTP_URL}", concurrency: 0, ca: nope-ca.pem } }\n`
      + `  - { name: b, token: ${TOKEN}b, inboundNumbers: ["12345"], webhook: { url: "${URL}", secretFile: nope.secret } }\n`);
    expect(message.split('\n').slice(1)).toEqual([
      'clients[0].webhook.concurrency: must be a whole number from 1 to 1000',
      'clients[0].webhook.url: must be an https:// URL; set allowHttp: true to allow http://',
      'clients[1].inboundNumbers[0]: also listed by clients[0]',
      'upstreams[0].inboundClient: names no client',
      `clients[0].webhook.ca: cannot read ${join(dir, 'nope-ca.pem')}: ENOENT`,
      `clients[1].webhook.secretFile: cannot read the file (relative to ${dir}): ENOENT`,
    ]);
  });

  it('never names a secretFile path in a message: it may be the secret typed in the wrong key', async () => {
    const message = await problem(withHook(`url: "${URL}", secretFile: ${HOOK_SECRET}`));
    expect(message).toContain('clients[0].webhook.secretFile: cannot read the file');
    expectNoSecretIn(message);
  });

  it('never quotes a secret from a file that is too short', async () => {
    expect(await problem(withHook(`url: "${URL}", secretFile: short.secret`))).not.toContain('shortsecret');
  });

  it('never quotes the url, the secret or the token, whatever else is wrong beside them', async () => {
    for (const yaml of [
      withHook(`url: "${URL}", secret: ${HOOK_SECRET}, sekret: ${HOOK_SECRET}`),
      withHook(`url: "${URL}", secret: [${HOOK_SECRET}]`),
      withHook(`url: [${URL}]`),
      withHook(`url: "${URL}", secret: "${HOOK_SECRET}`), // unclosed quote: a YAML error
      withClient(`tokn: ${TOKEN}, webhook: { url: "${URL}", secret: ${HOOK_SECRET}, concurrency: -1 }`),
    ]) {
      expectNoSecretIn(await problem(yaml));
    }
  });
});

describe('webhook and inbound routing settings', () => {
  it('applies every webhook default; no secret or ca unless given', async () => {
    const c = await parseConfig(withHook(`url: "${URL}"`), dir);
    expect(c.clients[0]!.webhook).toEqual({
      url: URL, allowHttp: false, timeoutSeconds: 10, concurrency: 16, retry: { initialSeconds: 1, maxSeconds: 300 }, maxAgeHours: 24,
    });
    expect(c.clients[0]!.webhook).not.toHaveProperty('secret');
    expect(c.clients[0]!.webhook).not.toHaveProperty('ca');
  });

  it('a client without webhook or inboundNumbers has neither key; an upstream without inboundClient has none', async () => {
    const c = await parseConfig(`${base}clients: [{ name: shop, token: ${TOKEN} }]\n`, dir);
    expect(c.clients[0]).toEqual({ name: 'shop', token: TOKEN, weight: 1 });
    expect(c.clients[0]).not.toHaveProperty('webhook');
    expect(c.clients[0]).not.toHaveProperty('inboundNumbers');
    expect(c.upstreams[0]).not.toHaveProperty('inboundClient');
  });

  it('keeps every value given, at the edges of each range', async () => {
    const c = await parseConfig(withHook(`url: "${HTTP_URL}", secret: ${HOOK_SECRET.slice(0, 16)}, allowHttp: true, timeoutSeconds: 2.5,`
      + ' concurrency: 1000, retry: { initialSeconds: 0.5, maxSeconds: 0.5 }, maxAgeHours: 0.25'), dir);
    expect(c.clients[0]!.webhook).toEqual({
      url: HTTP_URL, secret: HOOK_SECRET.slice(0, 16), allowHttp: true, timeoutSeconds: 2.5, concurrency: 1000,
      retry: { initialSeconds: 0.5, maxSeconds: 0.5 }, maxAgeHours: 0.25,
    });
    expect((await parseConfig(withHook(`url: "${URL}", concurrency: 1`), dir)).clients[0]!.webhook!.concurrency).toBe(1);
  });

  it('takes http:// only with allowHttp: true, and https:// either way', async () => {
    expect((await parseConfig(withHook(`url: "${HTTP_URL}", allowHttp: true`), dir)).clients[0]!.webhook).toMatchObject({ url: HTTP_URL, allowHttp: true });
    expect((await parseConfig(withHook(`url: "${URL}", allowHttp: true`), dir)).clients[0]!.webhook).toMatchObject({ url: URL, allowHttp: true });
    expect((await parseConfig(withHook('url: "https://[::1]:8443/hook"'), dir)).clients[0]!.webhook!.url).toBe('https://[::1]:8443/hook');
  });

  it('keeps inboundNumbers as strings, leading zeros and all, and routes an upstream to a client', async () => {
    const c = await parseConfig(`${base}    inboundClient: shop\nclients:\n`
      + `  - { name: shop, token: ${TOKEN}, inboundNumbers: ["447700900123", "012345", "${'9'.repeat(20)}", "1"] }\n`
      + `  - { name: other, token: ${TOKEN}2, inboundNumbers: ["447700900124"] }\n`, dir);
    expect(c.clients[0]!.inboundNumbers).toEqual(['447700900123', '012345', '9'.repeat(20), '1']);
    expect(c.clients[1]!.inboundNumbers).toEqual(['447700900124']);
    expect(c.upstreams[0]!.inboundClient).toBe('shop');
  });
});

describe('files named by the webhook', () => {
  it('reads secretFile relative to the config, trims one newline, and drops the key', async () => {
    writeFileSync(join(dir, 'hook.secret'), `${HOOK_SECRET}\n`);
    writeFileSync(join(dir, 'hook-crlf.secret'), `${HOOK_SECRET}\r\n`);
    writeFileSync(join(dir, 'hook-raw.secret'), ` ${HOOK_SECRET} `);
    const at = async (file: string) => (await parseConfig(withHook(`url: "${URL}", secretFile: ${file}`), dir)).clients[0]!.webhook!;
    expect((await at('hook.secret')).secret).toBe(HOOK_SECRET);
    expect((await at('hook-crlf.secret')).secret).toBe(HOOK_SECRET);
    expect((await at(join(dir, 'hook-raw.secret'))).secret).toBe(` ${HOOK_SECRET} `);
    expect(await at('hook.secret')).not.toHaveProperty('secretFile');
  });

  it('reads ca into a Buffer, relative to the config file’s folder', async () => {
    const sub = join(dir, 'hooks-etc');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'hooks-ca.pem'), 'HOOKSCA\n');
    writeFileSync(join(sub, 'shop.secret'), `${HOOK_SECRET}\n`);
    writeFileSync(join(sub, 'smppd.yaml'), withHook(`url: "${URL}", secretFile: shop.secret, ca: hooks-ca.pem`));
    const hook = (await loadConfigFile(join(sub, 'smppd.yaml'))).clients[0]!.webhook!;
    expect(Buffer.isBuffer(hook.ca)).toBe(true);
    expect(hook.ca?.toString()).toBe('HOOKSCA\n'); // a PEM file, not a secret: read as it is
    expect(hook.secret).toBe(HOOK_SECRET);
  });

  it('does not read secretFile beside an inline secret: the schema refuses the pair', async () => {
    const message = await problem(withHook(`url: "${URL}", secret: ${HOOK_SECRET}, secretFile: nope.secret`));
    expect(message).toContain('clients[0].webhook.secret: give secret or secretFile, not both');
    expect(message).not.toContain('cannot read');
  });
});

describe('webhook secrets stay out of printouts', () => {
  it('maskSecrets hides the webhook secret and describes the ca by size', async () => {
    writeFileSync(join(dir, 'mask-ca.pem'), 'SECRETHOOKCA');
    const c = await parseConfig(withHook(`url: "${URL}", secret: ${HOOK_SECRET}, ca: mask-ca.pem`), dir);
    const masked = maskSecrets(c);
    const printed = JSON.stringify(masked);
    expect(printed).not.toContain(HOOK_SECRET);
    expect(printed).not.toContain('SECRETHOOKCA');
    expect(masked).toMatchObject({ clients: [{ name: 'shop', token: '***', webhook: { secret: '***', ca: '<12 bytes>', concurrency: 16 } }] });
    expect(c.clients[0]!.webhook!.secret).toBe(HOOK_SECRET); // the config itself is untouched
  });
});
