/**
 * Routing by destination prefix and client over real sockets, with two SMSCs: each send reaches
 * the SMSC its route names (the longest prefix wins; a client's route beats the general one at
 * the same prefix, not a longer one); a number no route takes is refused 400 NO_ROUTE and nothing
 * is stored, for one send and for a sendbulk file; /sms/identify answers for the upstream the
 * number would take.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../support/engine.js';
import { ERROR_FIELDS, bulkForm } from '../../support/http.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { TOKENS, routingDaemon, smsc, untilAllFinal, type ClientName, type RoutingDaemon, type Smsc } from './rig.js';

const cleanups: Cleanups = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * `a`: GSM-7 with UDH (the defaults); `b`: Latin-1 as its default alphabet, long messages in one
 * message_payload.
 */
const ROUTES = [
  '{ prefix: "44", upstreams: [a] }',
  '{ prefix: "4477", upstreams: [b] }',
  '{ prefix: ["49", "33"], upstreams: [b], clients: [shop] }',
  '{ prefix: "49", upstreams: [a] }',
  '{ prefix: "4", upstreams: [b], clients: [shop] }',
];

let smscA: Smsc;
let smscB: Smsc;
let r: RoutingDaemon;

beforeAll(async () => {
  smscA = await smsc(cleanups);
  smscB = await smsc(cleanups);
  r = await routingDaemon(cleanups, {
    upstreams: [{ name: 'a', smsc: smscA }, { name: 'b', smsc: smscB, extra: 'defaultAlphabet: latin1, longMessages: payload' }],
    routes: ROUTES,
  });
  await r.untilAvailable('a');
  await r.untilAvailable('b');
});

/** Messages stored, read from the daemon's SQLite file. */
async function storedMessages(): Promise<number> {
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(join(r.dir, 'smppd.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('routes pick the SMSC', () => {
  it('by the longest prefix, and by client where a route names it, and each message is DELIVERED through that SMSC', async () => {
    const cases: Array<[ClientName, string, 'a' | 'b', string]> = [
      ['app', '441234000001', 'a', '44'],
      ['app', '447700000001', 'b', '4477'], // 4477 is longer than 44
      ['app', '491700000001', 'a', '49'],
      ['shop', '491700000002', 'b', '49,33@shop'], // shop's own route at the same prefix
      ['shop', '336120000001', 'b', '49,33@shop'],
      ['shop', '441234000002', 'a', '44'], // the general 44 is longer than shop's 4
      ['shop', '451234000001', 'b', '4@shop'],
    ];
    const ids = [];
    for (const [client, number] of cases) ids.push(await r.send(number, 'route me', client));
    expect(await untilAllFinal(r, ids)).toEqual(cases.map(() => 'DELIVERED'));
    for (const [client, number, upstream, route] of cases) {
      const at = upstream === 'a' ? smscA : smscB;
      const other = upstream === 'a' ? smscB : smscA;
      expect(at.destinations().filter((d) => d === number), `${client} ${number} at ${upstream}`).toHaveLength(1);
      expect(other.destinations(), `${client} ${number} not at the other`).not.toContain(number);
      expect(await r.counter('smppd_route_sends_total', { route, upstream }), `route ${route}`).toBeGreaterThan(0);
    }
    expect(smscA.received()).toHaveLength(3);
    expect(smscB.received()).toHaveLength(4);
  });

  it('a number no route takes is refused 400 NO_ROUTE in the five fields, and nothing is stored', async () => {
    const before = await storedMessages();
    // 33 is shop's only; 1… has no route at all.
    for (const [client, number] of [['app', '336120000009'], ['app', '15551230000'], ['shop', '15551230001']] as Array<[ClientName, string]>) {
      const res = await r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber: number, message: 'nowhere', messageType: 'TEXT' }, client);
      const body = await res.json() as Record<string, unknown>;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(body)).toEqual(ERROR_FIELDS);
      expect(body).toMatchObject({ status: 400, error: 'Bad Request', errorCode: 'NO_ROUTE', requestUri: '/sms/sendSms' });
      expect(body.message).toContain(number);
    }
    expect(await storedMessages()).toBe(before);
  });

  it('a sendbulk file with a number no route takes is refused 400 NO_ROUTE whole: none of its numbers is stored or sent', async () => {
    const before = await storedMessages();
    const sentBefore = smscA.received().length + smscB.received().length;
    const form = bulkForm({ senderId: 'Routing', message: 'bulk', messageType: 'TEXT' }, '441234000100\n441234000101\n15551230002\n491700000100\n');
    const res = await fetch(`http://127.0.0.1:${r.d.http.port}/sms/sendbulk`, {
      method: 'POST', headers: { ...form.headers, authorization: `Bearer ${TOKENS.app}` }, body: form.payload,
    });
    const body = await res.json() as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(Object.keys(body)).toEqual(ERROR_FIELDS);
    expect(body).toMatchObject({ status: 400, errorCode: 'NO_ROUTE', requestUri: '/sms/sendbulk' });
    expect(body.message).toContain('15551230002');
    expect(await storedMessages()).toBe(before);
    const list = await fetch(`http://127.0.0.1:${r.d.http.port}/sms/list`, { headers: { authorization: `Bearer ${TOKENS.app}` } });
    expect(await list.json()).toEqual([]);
    expect(smscA.received().length + smscB.received().length).toBe(sentBefore);
  });

  it('a sendbulk file whose numbers all have routes goes to each number\'s SMSC', async () => {
    const form = bulkForm({ senderId: 'Routing', message: 'bulk', messageType: 'TEXT' }, '441234000200\n447700000200\n491700000200\n');
    const res = await fetch(`http://127.0.0.1:${r.d.http.port}/sms/sendbulk`, {
      method: 'POST', headers: { ...form.headers, authorization: `Bearer ${TOKENS.app}` }, body: form.payload,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await until(() => [...smscA.destinations(), ...smscB.destinations()].filter((d) => d.endsWith('000200')).length === 3, 10_000, 'the bulk at the SMSCs');
    expect(smscA.destinations()).toEqual(expect.arrayContaining(['441234000200', '491700000200']));
    expect(smscB.destinations()).toContain('447700000200');
  });
});

describe('/sms/identify with destinationNumber', () => {
  const identify = async (body: object, client: ClientName = 'app') => {
    const res = await r.post('/sms/identify', body, client);
    expect(res.status).toBe(200);
    return res.json() as Promise<{ messageType: string; smscount: number; charCount: number; charLimit: number }>;
  };

  it('answers for the upstream the number takes: UDH parts on a, one message_payload on b', async () => {
    const long = 'x'.repeat(400);
    expect(await identify({ message: long, destinationNumber: '441234000001' })).toMatchObject({ messageType: 'GSM-7', smscount: 3, charLimit: 153 });
    expect(await identify({ message: long, destinationNumber: '447700000001' })).toMatchObject({ messageType: 'GSM-7', smscount: 1, charLimit: 160 });
  });

  it('follows the client: shop\'s 49 goes to b (one message_payload), app\'s to a (UDH parts)', async () => {
    const long = 'Grüße aus Köln. '.repeat(20);
    expect(await identify({ message: long, destinationNumber: '491700000001' }, 'app')).toMatchObject({ messageType: 'GSM-7', smscount: 3, charLimit: 153 });
    expect(await identify({ message: long, destinationNumber: '491700000001' }, 'shop')).toMatchObject({ messageType: 'GSM-7', smscount: 1, charLimit: 160 });
  });

  it('a number no route takes, or no number: the text as the defaults see it', async () => {
    const text = 'ô'.repeat(100);
    const defaults = { messageType: 'UNICODE', smscount: 2, charLimit: 67 };
    expect(await identify({ message: text, destinationNumber: '15551230000' })).toMatchObject(defaults);
    expect(await identify({ message: text })).toMatchObject(defaults);
  });
});
