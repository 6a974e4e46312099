/**
 * GET /admin/messages and /admin/messages/{id} on a running daemon, over real sockets, on SQLite
 * and on PostgreSQL: the messages of two clients to one number, found together, filtered, a page at
 * a time; one message's whole story; bad parameters refused by name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Cleanups } from '../../support/daemon-child.js';
import { until } from '../../support/engine.js';
import { startWebhookReceiver } from '../../support/webhook-receiver.js';
import { describePg, PG_URL, pgSchema } from '../postgres/pg-store.js';
import { ADMIN_CONFIG, call } from './admin.js';
import { routingDaemon, smsc, untilAllFinal } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const NUMBER = '447700900555';
const LONG = 'A message long enough to need two parts of a concatenated SMS: '.repeat(3);

interface Found { id: string; client: string; upstream: string; sender: string; destination: string; status: string; reason: string | null; parts: number; acceptedAt: string; updatedAt: string }

function searchAndShow(store: () => Promise<string | undefined>): void {
  it('finds the messages of two clients to one number, newest first, filtered and paged; tells one message\'s story', async () => {
    const a = await smsc(cleanups);
    const storeMap = await store();
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG, ...(storeMap ? { store: storeMap } : {}) });
    await r.untilAvailable('a');
    const first = await r.send(NUMBER, 'from app', 'app');
    const long = await r.send(NUMBER, LONG, 'shop');
    const third = await r.send(NUMBER, 'from app again', 'app');
    const other = await r.send('447700900666', 'elsewhere', 'shop');
    expect(await untilAllFinal(r, [first, long, third, other])).toEqual(['DELIVERED', 'DELIVERED', 'DELIVERED', 'DELIVERED']);

    const find = async (query: string) => {
      const res = await call(r, 'GET', `/admin/messages?${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as unknown as { messages: Found[]; next: string | null };
    };
    const byNumber = await find(`destination=%2B${NUMBER}`);
    expect(byNumber.messages.map((m) => m.id)).toEqual([third, long, first]);
    expect(byNumber.next).toBeNull();
    expect(byNumber.messages[1]).toEqual({
      id: long, client: 'shop', upstream: 'a', sender: 'Routing', destination: NUMBER, status: 'DELIVERED', reason: null, parts: 2,
      acceptedAt: expect.stringMatching(/Z$/) as string, updatedAt: expect.stringMatching(/Z$/) as string,
    });
    expect((await find('client=shop')).messages.map((m) => m.id)).toEqual([other, long]);
    expect((await find(`destination=${NUMBER}&client=app&status=DELIVERED`)).messages.map((m) => m.id)).toEqual([third, first]);
    const longAt = byNumber.messages[1]!.acceptedAt;
    expect((await find(`destination=${NUMBER}&until=${encodeURIComponent(longAt)}`)).messages.map((m) => m.id)).toEqual([first]);
    expect((await find(`since=${encodeURIComponent(longAt)}&client=shop`)).messages.map((m) => m.id)).toEqual([other, long]);
    // A page at a time.
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page: { messages: Found[]; next: string | null } = await find(`destination=${NUMBER}&limit=1${after ? `&after=${after}` : ''}`);
      seen.push(...page.messages.map((m) => m.id));
      after = page.next;
    } while (after !== null);
    expect(seen).toEqual([third, long, first]);

    const story = await call(r, 'GET', `/admin/messages/${long}`);
    expect(story.status).toBe(200);
    const s = story.body as {
      message: Record<string, unknown>; parts: Array<Record<string, unknown>>; history: Array<{ part: number | null; status: string; source: string }>; events: unknown[];
    };
    expect(s.message).toMatchObject({ id: long, client: 'shop', upstream: 'a', route: 'default', batchId: null, sender: 'Routing', destination: NUMBER, text: LONG, status: 'DELIVERED' });
    expect(s.parts).toHaveLength(2);
    for (const [i, p] of s.parts.entries()) {
      expect(p).toMatchObject({ part: i + 1, state: 'done', status: 'DELIVERED', bind: 'a#0', attempts: 1 });
      expect(typeof p.smscId).toBe('string');
      expect(Date.parse(p.sentAt as string)).toBeGreaterThan(0);
    }
    expect(s.history.map((h) => `${h.part ?? '-'} ${h.status} ${h.source}`)).toEqual(expect.arrayContaining([
      '- SUBMITTED accept', '1 SENT submit', '2 SENT submit', '1 DELIVERED receipt', '2 DELIVERED receipt', '- DELIVERED receipt',
    ]));
    expect(s.history[0]).toMatchObject({ part: null, status: 'SUBMITTED', source: 'accept' });
    // Neither client has a webhook: no events.
    expect(s.events).toEqual([]);
    expect((await call(r, 'GET', '/admin/messages/no-such-id')).body).toMatchObject({ status: 404, errorCode: 'MESSAGE_NOT_FOUND' });
  }, 60_000);

  it('tells the events of a message whose client has a webhook: each delivered, with its time, its sends and the error before', async () => {
    const hook = await startWebhookReceiver();
    cleanups.push(() => hook.close());
    // The receiver refuses its first request: that event is delivered on its second send.
    hook.setBehaviour((_req, index) => (index === 0 ? { status: 502 } : { status: 200 }));
    const a = await smsc(cleanups);
    const storeMap = await store();
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG, webhooks: { app: hook.url }, ...(storeMap ? { store: storeMap } : {}) });
    await r.untilAvailable('a');
    const id = await r.send(NUMBER, 'with events', 'app');
    expect(await untilAllFinal(r, [id])).toEqual(['DELIVERED']);
    await hook.waitForAccepted(3);

    type Event = { id: number; kind: string; status: string; state: string; attempts: number; createdAt: string; nextAttemptAt: string | null; deliveredAt: string | null; lastError: string | null };
    let events: Event[] = [];
    // Read until the last delivery has settled (it commits after the receiver's answer).
    await until(async () => {
      events = ((await call(r, 'GET', `/admin/messages/${id}`)).body as { events: Event[] }).events;
      return events.length === 3 && events.every((e) => e.state === 'delivered');
    }, 10_000, 'three delivered events in the story');
    expect(events.map((e) => `${e.status} ${e.state} ${e.attempts}`)).toEqual(['SUBMITTED delivered 2', 'SENT delivered 1', 'DELIVERED delivered 1']);
    expect(events[0]!.lastError).toMatch(/502/);
    for (const e of events) {
      expect(e).toMatchObject({ kind: 'status', nextAttemptAt: null });
      expect(Date.parse(e.deliveredAt!)).toBeGreaterThanOrEqual(Date.parse(e.createdAt));
    }
    expect(events[1]!.lastError).toBeNull();
  }, 60_000);
}

describe('admin message search on SQLite', () => {
  searchAndShow(async () => undefined);

  it('refuses a bad parameter with 400, naming it', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG });
    for (const [query, names] of [
      ['destination=44-7700', 'destination'], ['limit=0', 'limit'], ['limit=501', 'limit'], ['status=LOST', 'status'],
      ['since=yesterday', 'since'], ['after=abc', 'after'], ['colour=blue', 'colour'], ['client=a%20b', 'client'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
    ] as const) {
      const res = await call(r, 'GET', `/admin/messages?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ status: 400, errorCode: 'VALIDATION', requestUri: '/admin/messages' });
      expect(String(res.body!.message), query).toContain(names);
    }
  }, 30_000);
});

describePg('admin message search on PostgreSQL', () => {
  searchAndShow(async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    return `{ kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: admin-a }`;
  });
});
