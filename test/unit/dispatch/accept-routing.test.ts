/**
 * The acceptor over several upstreams: each send takes its route's upstream and is composed by
 * that upstream's text rules; a number no route takes is refused NO_ROUTE and nothing is stored;
 * a bulk job is refused whole for numbers without a route, and its numbers each take their own
 * route. What a failover moves is composed with the same composers.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isSmppdError } from '../../../src/core/errors.js';
import { Acceptor, type AcceptorUpstream } from '../../../src/dispatch/accept.js';
import { RouteTable, type RouteSpec } from '../../../src/dispatch/route-table.js';
import { Router } from '../../../src/dispatch/router.js';
import type { Accepted, AcceptRequest, MessageIntake, NewMessage, QueueDepth } from '../../../src/store/intake.js';

const RULES = { nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true } as const;
const UPSTREAMS: AcceptorUpstream[] = [
  { name: 'gsm', compose: { ...RULES, defaultAlphabet: 'gsm7' } },
  { name: 'latin', compose: { ...RULES, defaultAlphabet: 'latin1', longMessages: 'sar', requestReceipts: false } },
  { name: 'short', compose: { ...RULES, defaultAlphabet: 'gsm7', maxParts: 1 } },
  { name: 'payload', compose: { ...RULES, defaultAlphabet: 'gsm7', longMessages: 'payload' } },
];

const route = (name: string, prefixes: string[], upstreams: string[], clients?: string[]): RouteSpec => ({
  name, prefixes, upstreams, strategy: 'failover', weights: upstreams.map(() => 1), ...(clients ? { clients } : {}),
});

class RecordingIntake implements MessageIntake {
  readonly accepted: NewMessage[] = [];
  async accept(request: AcceptRequest): Promise<Accepted> {
    this.accepted.push(...request.messages);
    return { batchId: request.batch ? 7 : null, scheduleId: null };
  }
  queueDepth = async (): Promise<QueueDepth> => ({ queued: 0, byClient: [] });
}

function acceptor(routes: RouteSpec[], available: (u: string) => boolean = () => true, maxQueued = 1_000_000) {
  const store = new RecordingIntake();
  const routed: string[] = [];
  const a = new Acceptor({
    store, clock: new ManualClock(), maxQueued, upstreams: UPSTREAMS,
    router: new Router(new RouteTable(routes), { available }),
    counters: { routed: (r, u) => routed.push(`${r}>${u}`) },
  });
  return { a, store, routed };
}

const send = (destination: string, message = 'Hello', client = 'app') =>
  ({ client, senderId: 'Shop', message, messageType: 'TEXT' as const, destination });

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isSmppdError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('Acceptor with routes', () => {
  it('sends each number to its route\'s upstream, stores the route, and counts it', async () => {
    const { a, store, routed } = acceptor([route('uk', ['44'], ['latin']), route('any', [''], ['gsm'])]);
    await a.send(send('447700900001'));
    await a.send(send('4915112345678'));
    expect(store.accepted.map((m) => [m.destination, m.upstream, m.route])).toEqual([
      ['447700900001', 'latin', 'uk'], ['4915112345678', 'gsm', 'any'],
    ]);
    expect(routed).toEqual(['uk>latin', 'any>gsm']);
  });

  it('composes by the chosen upstream\'s rules: its alphabet, long-message mode and receipts', async () => {
    const { a, store } = acceptor([route('uk', ['44'], ['latin']), route('any', [''], ['gsm'])]);
    const text = 'é'.repeat(200);
    await a.send(send('447700900001', text));
    await a.send(send('4915112345678', text));
    const [latin, gsm] = store.accepted;
    // Latin-1 carries é in one octet: 200 octets make two SAR parts; GSM-7 needs é as one septet
    // (it is in the default table): 200 septets make two UDH parts.
    expect(latin!.parts).toHaveLength(2);
    expect(latin!.parts[0]!.sar).toMatchObject({ total: 2, seq: 1 });
    expect(latin!.registeredDelivery).toBe(0);
    expect(gsm!.parts[0]!.sar).toBeUndefined();
    expect(gsm!.parts[0]!.esmClass & 0x40).toBe(0x40);
    expect(gsm!.registeredDelivery).toBe(1);
  });

  it('skips an unavailable upstream of a failover route, and goes to the first when none is available', async () => {
    let up = new Set(['gsm']);
    const { a, store } = acceptor([route('uk', ['44'], ['latin', 'gsm'])], (u) => up.has(u));
    await a.send(send('447700900001'));
    up = new Set();
    await a.send(send('447700900002'));
    expect(store.accepted.map((m) => m.upstream)).toEqual(['gsm', 'latin']);
  });

  it('a client\'s own route wins over the general one at the same prefix', async () => {
    const { a, store } = acceptor([route('uk', ['44'], ['gsm']), route('uk@shop', ['44'], ['latin'], ['shop'])]);
    await a.send(send('447700900001', 'Hi', 'shop'));
    await a.send(send('447700900001', 'Hi', 'app'));
    expect(store.accepted.map((m) => m.upstream)).toEqual(['latin', 'gsm']);
  });

  it('refuses a number no route takes with NO_ROUTE, storing nothing', async () => {
    const { a, store } = acceptor([route('uk', ['44'], ['gsm'])]);
    expect(await refusal(a.send(send('4915112345678')))).toEqual({ code: 'NO_ROUTE', message: 'destinationNumber: no route takes 4915112345678 for this client' });
    expect(store.accepted).toEqual([]);
  });

  it('refuses what no upstream of the route can carry with the preferred upstream\'s rule', async () => {
    const { a } = acceptor([route('uk', ['44'], ['short'])]);
    expect((await refusal(a.send(send('447700900001', 'x'.repeat(200))))).code).toBe('MESSAGE_TOO_LONG');
  });

  it('passes over an upstream that cannot carry the text for one of the route that can, available or not', async () => {
    let up = new Set(['short', 'gsm']);
    const { a, store } = acceptor([route('uk', ['44'], ['short', 'gsm'])], (u) => up.has(u));
    await a.send(send('447700900001', 'x'.repeat(200)));
    await a.send(send('447700900002', 'short'));
    // Only short is up: the long text still goes to gsm's queue rather than being refused.
    up = new Set(['short']);
    await a.send(send('447700900003', 'x'.repeat(200)));
    expect(store.accepted.map((m) => m.upstream)).toEqual(['gsm', 'short', 'gsm']);
  });
});

describe('Acceptor bulk jobs with routes', () => {
  it('routes each number on its own and reserves for the most parts an upstream makes', async () => {
    const { a, store, routed } = acceptor([route('uk', ['44'], ['latin']), route('any', [''], ['gsm'])]);
    const writer = await a.startBulk({ client: 'app', senderId: 'Shop', message: 'Hello', messageType: 'TEXT' });
    writer.checkRoutes([['447700900001', '4915112345678']]);
    await writer.reserve(2);
    await writer.add(['447700900001', '4915112345678']);
    writer.close();
    expect(store.accepted.map((m) => [m.upstream, m.route])).toEqual([['latin', 'uk'], ['gsm', 'any']]);
    expect(routed).toEqual(['uk>latin', 'any>gsm']);
  });

  it('reserves what each number\'s own route makes of the text, not the most any upstream makes', async () => {
    // 290 x: two parts on gsm (UDH, 153 septets a part), one on payload (message_payload).
    const routes = [route('uk', ['44'], ['payload']), route('any', [''], ['gsm'])];
    const numbers = ['447700900001', '4915112345678', '33612345678'];
    const start = async (maxQueued: number) => {
      const writer = await acceptor(routes, () => true, maxQueued).a.startBulk({ client: 'app', senderId: 'Shop', message: 'x'.repeat(290), messageType: 'TEXT' });
      expect(writer.partsPerMessage).toBe(2);
      writer.checkRoutes([numbers]);
      return writer;
    };
    // 1 + 2 + 2 parts fit in 5 (3 × 2 would not) …
    await (await start(5)).reserve(3);
    // … and not in 4.
    expect((await refusal((await start(4)).reserve(3))).code).toBe('QUEUE_FULL');
  });

  it('is refused whole when numbers match no route, naming how many and the first', async () => {
    const { a } = acceptor([route('uk', ['44'], ['gsm'])]);
    const writer = await a.startBulk({ client: 'app', senderId: 'Shop', message: 'Hello', messageType: 'TEXT' });
    let thrown: unknown;
    try {
      writer.checkRoutes([['447700900001', '4915112345678'], ['33612345678']]);
    } catch (e) {
      thrown = e;
    }
    expect(isSmppdError(thrown, 'NO_ROUTE')).toBe(true);
    expect((thrown as Error).message).toBe('destinationNumberFile: 2 numbers match no route for this client (the first: 4915112345678); nothing was stored');
  });

  it('composes a failover move with the upstream\'s own rules (composeFor)', () => {
    const { a } = acceptor([route('any', [''], ['gsm', 'latin'])]);
    const composed = a.composeFor('latin', { source: 'Shop', text: 'é'.repeat(200), messageType: 'TEXT' });
    expect(composed.parts).toHaveLength(2);
    expect(composed.parts[0]!.tlvs?.sarTotalSegments).toBe(2);
  });
});
