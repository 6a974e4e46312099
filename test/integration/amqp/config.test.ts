/**
 * The `amqp` section: defaults, key paths in every refusal, the URL as a secret (urlFile,
 * masked, never in a message), and clients it names checked against `clients`. No broker needed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatMaskedConfig, maskSecrets, parseConfig } from '../../../src/config/load.js';
import { configRefusal } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-amqp-config-'));
const BROKER_PASSWORD = 'br0ker-pa55';
const URL = `amqps://smppd:${BROKER_PASSWORD}@mq.example.net:5671/sms`;
const base = `upstreams:
  - name: provider
    host: 127.0.0.1
    systemId: smppclient1
    password: s3cr3tpw
clients:
  - { name: shop, token: tok-0123456789abcdef }
  - { name: crm, token: tok-fedcba9876543210 }
`;
const withAmqp = (amqp: string): string => `${base}amqp: { ${amqp} }\n`;

const problem = (yaml: string): Promise<string> => configRefusal(() => parseConfig(yaml, dir));

describe('the amqp section', () => {
  it('is absent by default', async () => {
    expect((await parseConfig(base, dir)).amqp).toBeUndefined();
  });

  it('fills in every default', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: sms.send`), dir);
    expect(c.amqp).toEqual({
      url: URL, queue: 'sms.send', deadLetterExchange: 'sms.send.dead', deadLetterQueue: 'sms.send.dead', prefetch: 500, maxMessageBytes: 1024 * 1024,
      retry: { initialSeconds: 1, maxSeconds: 30 }, reconnect: { initialSeconds: 1, maxSeconds: 60 },
    });
  });

  it('takes every key', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: sms.send, exchange: sms, routingKey: send, deadLetterExchange: sms.refused,
      deadLetterQueue: sms.refused.q, prefetch: 2000, client: shop, maxMessageBytes: 4096, retry: { initialSeconds: 2, maxSeconds: 20 },
      events: { exchange: sms.events, clients: [crm], concurrency: 8, timeoutSeconds: 3, mandatory: false }`), dir);
    expect(c.amqp).toMatchObject({
      exchange: 'sms', routingKey: 'send', deadLetterExchange: 'sms.refused', deadLetterQueue: 'sms.refused.q', prefetch: 2000, client: 'shop', maxMessageBytes: 4096,
      retry: { initialSeconds: 2, maxSeconds: 20 },
      events: { exchange: 'sms.events', clients: ['crm'], concurrency: 8, timeoutSeconds: 3, mandatory: false, retry: { initialSeconds: 1, maxSeconds: 300 }, maxAgeHours: 24 },
    });
  });

  it('binds the exchange with the queue name when routingKey is left out', async () => {
    expect((await parseConfig(withAmqp(`url: "${URL}", queue: q, exchange: x`), dir)).amqp?.routingKey).toBe('q');
  });

  it('reads the URL from urlFile (one trailing newline trimmed)', async () => {
    writeFileSync(join(dir, 'amqp.url'), `${URL}\n`);
    expect((await parseConfig(withAmqp('urlFile: amqp.url, queue: q'), dir)).amqp?.url).toBe(URL);
  });

  it('masks the URL: scheme and host only', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: q`), dir);
    expect(JSON.stringify(maskSecrets(c))).not.toContain(BROKER_PASSWORD);
    expect(formatMaskedConfig(c)).not.toContain(BROKER_PASSWORD);
    expect((maskSecrets(c) as { amqp: { url: string } }).amqp.url).toBe('amqps://mq.example.net:5671/***');
  });

  const cases: Array<[string, string, string]> = [
    ['not a mapping', `${base}amqp: 5\n`, 'amqp: must be a mapping'],
    ['no url', withAmqp('queue: q'), 'amqp.url: one of url or urlFile is required'],
    ['url and urlFile', withAmqp(`url: "${URL}", urlFile: amqp.url, queue: q`), 'amqp.url: give url or urlFile, not both'],
    ['an http url', withAmqp(`url: "${URL.replace('amqps:', 'https:')}", queue: q`), 'amqp.url: must be an amqp:// or amqps:// URL'],
    ['not a url', withAmqp(`url: "mq.example.net:${BROKER_PASSWORD}", queue: q`), 'amqp.url: must be an amqp:// or amqps:// URL'],
    ['no queue', withAmqp(`url: "${URL}"`), 'amqp.queue: is required'],
    ['a queue of the broker', withAmqp(`url: "${URL}", queue: amq.gen-1`), 'amqp.queue: must not start with amq.'],
    ['a queue with a space', withAmqp(`url: "${URL}", queue: "a b"`), 'amqp.queue: must be 1–255 of'],
    ['prefetch 0', withAmqp(`url: "${URL}", queue: q, prefetch: 0`), 'amqp.prefetch: must be a whole number from 1 to 65535'],
    ['routingKey without exchange', withAmqp(`url: "${URL}", queue: q, routingKey: k`), 'amqp.routingKey: is for exchange'],
    ['dead-letter queue = queue', withAmqp(`url: "${URL}", queue: q, deadLetterQueue: q`), 'amqp.deadLetterQueue: must differ from queue'],
    ['an unknown key', withAmqp(`url: "${URL}", queue: q, prefech: 5`), 'amqp.prefech: unknown key'],
    ['a client that is not one', withAmqp(`url: "${URL}", queue: q, client: nobody`), 'amqp.client: names no client'],
    ['events without exchange', withAmqp(`url: "${URL}", queue: q, events: {}`), 'amqp.events.exchange: is required'],
    ['events to the dead-letter exchange', withAmqp(`url: "${URL}", queue: q, events: { exchange: q.dead }`), 'amqp.events.exchange: must differ from deadLetterExchange'],
    ['an events client that is not one', withAmqp(`url: "${URL}", queue: q, events: { exchange: e, clients: [shop, nobody] }`), 'amqp.events.clients[1]: names no client'],
    ['an events client twice', withAmqp(`url: "${URL}", queue: q, events: { exchange: e, clients: [shop, shop] }`), 'amqp.events.clients[1]: duplicates clients[0]'],
    ['an unreadable urlFile', withAmqp('urlFile: nope.url, queue: q'), 'amqp.urlFile: cannot read the file'],
  ];
  for (const [what, yaml, expected] of cases) {
    it(`refuses ${what}, naming the key`, async () => {
      const message = await problem(yaml);
      expect(message).toContain(expected);
      expect(message).not.toContain(BROKER_PASSWORD);
    });
  }

  it('refuses a urlFile that holds no broker URL, without quoting it', async () => {
    writeFileSync(join(dir, 'bad.url'), `https://smppd:${BROKER_PASSWORD}@mq.example.net\n`);
    const message = await problem(withAmqp('urlFile: bad.url, queue: q'));
    expect(message).toContain('amqp.urlFile: the URL in the file must be an amqp:// or amqps:// URL');
    expect(message).not.toContain(BROKER_PASSWORD);
  });
});
