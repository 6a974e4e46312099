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

  it('fills in every default; amqp.clients is amqp.client alone', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: sms.send, client: shop`), dir);
    expect(c.amqp).toEqual({
      url: URL, queue: 'sms.send', deadLetterExchange: 'sms.send.dead', deadLetterQueue: 'sms.send.dead', prefetch: 500, maxMessageBytes: 1024 * 1024, dedupHours: 24,
      retry: { initialSeconds: 1, maxSeconds: 30 }, reconnect: { initialSeconds: 1, maxSeconds: 60 }, client: 'shop', clients: ['shop'],
    });
  });

  it('takes amqp.clients with or without a default client, and amqp.users (whose clients are the default clients)', async () => {
    expect((await parseConfig(withAmqp(`url: "${URL}", queue: q, clients: [shop, crm]`), dir)).amqp).toMatchObject({ clients: ['shop', 'crm'] });
    expect((await parseConfig(withAmqp(`url: "${URL}", queue: q, clients: [shop, crm], client: crm`), dir)).amqp).toMatchObject({ clients: ['shop', 'crm'], client: 'crm' });
    const users = (await parseConfig(withAmqp(`url: "${URL}", queue: q, users: { shop-app: shop, shop-batch: shop, "crm@eu": crm }`), dir)).amqp;
    expect(users).toMatchObject({ clients: ['shop', 'crm'], users: { 'shop-app': 'shop', 'shop-batch': 'shop', 'crm@eu': 'crm' } });
    expect(users?.client).toBeUndefined();
    expect((await parseConfig(withAmqp(`url: "${URL}", queue: q, clients: [shop, crm], users: { shop-app: shop }`), dir)).amqp).toMatchObject({ clients: ['shop', 'crm'] });
  });

  it('takes every key', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: sms.send, exchange: sms, routingKey: send, deadLetterExchange: sms.refused,
      deadLetterQueue: sms.refused.q, prefetch: 2000, client: shop, maxMessageBytes: 4096, dedupHours: 0, retry: { initialSeconds: 2, maxSeconds: 20 },
      events: { exchange: sms.events, clients: [crm], concurrency: 8, timeoutSeconds: 3, mandatory: false }`), dir);
    expect(c.amqp).toMatchObject({
      exchange: 'sms', routingKey: 'send', deadLetterExchange: 'sms.refused', deadLetterQueue: 'sms.refused.q', prefetch: 2000, client: 'shop', maxMessageBytes: 4096, dedupHours: 0,
      retry: { initialSeconds: 2, maxSeconds: 20 },
      events: { exchange: 'sms.events', clients: ['crm'], concurrency: 8, timeoutSeconds: 3, mandatory: false, retry: { initialSeconds: 1, maxSeconds: 300 }, maxAgeHours: 24 },
    });
  });

  it('binds the exchange with the queue name when routingKey is left out', async () => {
    expect((await parseConfig(withAmqp(`url: "${URL}", queue: q, exchange: x, client: shop`), dir)).amqp?.routingKey).toBe('q');
  });

  it('reads the URL from urlFile (one trailing newline trimmed)', async () => {
    writeFileSync(join(dir, 'amqp.url'), `${URL}\n`);
    expect((await parseConfig(withAmqp('urlFile: amqp.url, queue: q, client: shop'), dir)).amqp?.url).toBe(URL);
  });

  it('masks the URL: scheme and host only', async () => {
    const c = await parseConfig(withAmqp(`url: "${URL}", queue: q, client: shop`), dir);
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
    ['an events client that is not one', withAmqp(`url: "${URL}", queue: q, client: shop, events: { exchange: e, clients: [shop, nobody] }`), 'amqp.events.clients[1]: names no client'],
    ['no client, clients or users', withAmqp(`url: "${URL}", queue: q`), 'amqp.clients: is required: list the clients a queue message may act as'],
    ['clients empty', withAmqp(`url: "${URL}", queue: q, clients: []`), 'amqp.clients: must list at least one client'],
    ['clients not a list', withAmqp(`url: "${URL}", queue: q, clients: shop`), 'amqp.clients: must be a list of client names'],
    ['a clients entry that is not one', withAmqp(`url: "${URL}", queue: q, clients: [shop, nobody]`), 'amqp.clients[1]: names no client'],
    ['a client twice in clients', withAmqp(`url: "${URL}", queue: q, clients: [shop, crm, shop]`), 'amqp.clients[2]: duplicates clients[0]'],
    ['a default client not in clients', withAmqp(`url: "${URL}", queue: q, clients: [crm], client: shop`), 'amqp.client: must be one of amqp.clients'],
    ['users and client', withAmqp(`url: "${URL}", queue: q, client: shop, users: { a: shop }`), 'amqp.client: give users or client, not both'],
    ['users empty', withAmqp(`url: "${URL}", queue: q, users: {}`), 'amqp.users: must map at least one user'],
    ['users not a mapping', withAmqp(`url: "${URL}", queue: q, users: [a]`), 'amqp.users: must be a mapping { <RabbitMQ user>: <client> }'],
    ['a user mapped to no client', withAmqp(`url: "${URL}", queue: q, users: { shop-app: nobody }`), 'amqp.users.shop-app: names no client'],
    ['a user mapped outside clients', withAmqp(`url: "${URL}", queue: q, clients: [crm], users: { shop-app: shop }`), 'amqp.users.shop-app: must map to one of amqp.clients'],
    ['smppd\'s own user in users', withAmqp(`url: "${URL}", queue: q, users: { smppd: shop }`), 'amqp.users.smppd: is smppd\'s own RabbitMQ user'],
    ['a wait queue name too long', withAmqp(`url: "${URL}", queue: ${'q'.repeat(250)}, client: shop`), 'amqp.queue: the wait queue of client shop'],
    ['a dead-letter queue that is a wait queue', withAmqp(`url: "${URL}", queue: q, client: shop, deadLetterQueue: q.wait.shop`), 'amqp.deadLetterQueue: must differ from the wait queue of client shop'],
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
    const message = await problem(withAmqp('urlFile: bad.url, queue: q, client: shop'));
    expect(message).toContain('amqp.urlFile: the URL in the file must be an amqp:// or amqps:// URL');
    expect(message).not.toContain(BROKER_PASSWORD);
  });
});
