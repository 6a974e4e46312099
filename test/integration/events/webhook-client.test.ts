import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { SIGNATURE_HEADER, verifySignature } from '../../../src/events/signature.js';
import { type PostOutcome, WebhookClient, type WebhookTarget } from '../../../src/events/webhook-client.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const TLS_DIR = join(import.meta.dirname, '../../fixtures/tls');
const SERVER_TLS = { key: readFileSync(join(TLS_DIR, 'server.key')), cert: readFileSync(join(TLS_DIR, 'server.crt')) };
const TEST_CA = readFileSync(join(TLS_DIR, 'ca.crt'));

const SECRET = 'whsec_ThisIsTheHmacSecret_9f8e7d';
const URL_TOKEN = 's3cr3t-query-token-5a4b3c';
/** The ManualClock's wall start, 2026-01-01T00:00:00Z, in unix seconds. */
const WALL_START_S = Date.UTC(2026, 0, 1) / 1000;
const USER_AGENT = 'smppd/0.1.0 (test)';
const BODY = JSON.stringify({ event: 'message.delivered', id: 'm-1', text: 'Grüße 👋 €', n: 1 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(options?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(options);
  cleanups.push(() => r.close());
  return r;
}

function client(target: Partial<WebhookTarget> & { url: string }, clock = new ManualClock()): WebhookClient {
  const c = new WebhookClient({ timeoutMs: 5_000, concurrency: 1, ...target }, { clock, userAgent: USER_AGENT });
  cleanups.push(() => c.close());
  return c;
}

/** Lets I/O run while a promise is pending (the test never sleeps for a timeout: the ManualClock drives it). */
function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  return Promise.race([p.then((value) => ({ done: true, value })), new Promise<{ done: false }>((r) => setTimeout(() => r({ done: false }), 100))]);
}

function expectNoSecrets(outcome: PostOutcome): void {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(SECRET);
  expect(text).not.toContain(URL_TOKEN);
  expect(text).not.toContain('token=');
  expect(text).not.toContain('/hook');
}

describe('WebhookClient', () => {
  it('a request undici refuses at once (a header it cannot send) ends as a failure, with no timer left behind', async () => {
    const r = await receiver();
    const clock = new ManualClock();
    const c = new WebhookClient({ url: r.url, timeoutMs: 5_000, concurrency: 1 }, { clock, userAgent: 'bad\nagent' });
    cleanups.push(() => c.close());
    const result = await settled(c.post('{}', 1));
    expect(result.done).toBe(true);
    expect(result.value).toMatchObject({ ok: false, failure: 'network' });
    expect(clock.pendingTimers).toBe(0);
  });

  it('POSTs the exact body bytes with the event id, the timestamp and a signature the receiver can verify', async () => {
    const r = await receiver();
    const clock = new ManualClock();
    const c = client({ url: r.url, secret: SECRET }, clock);

    const outcome = await c.post(BODY, 4711);

    expect(outcome).toEqual({ ok: true, status: 200, ms: 0 });
    expect(r.received).toHaveLength(1);
    const seen = r.received[0]!;
    expect(seen.path).toBe('/hook');
    expect(seen.body).toBe(BODY);
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(BODY, 'utf8')));
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['user-agent']).toBe(USER_AGENT);
    expect(seen.headers['x-smppd-event-id']).toBe('4711');
    expect(seen.headers['x-smppd-timestamp']).toBe(String(WALL_START_S));
    const signature = seen.headers[SIGNATURE_HEADER];
    expect(typeof signature).toBe('string');
    expect(signature).toMatch(new RegExp(`^t=${WALL_START_S},v2=[0-9a-f]{64}$`));
    expect(verifySignature(SECRET, signature as string, '4711', seen.body, WALL_START_S)).toBe(true);
    expect(verifySignature('whsec_wrong', signature as string, '4711', seen.body, WALL_START_S)).toBe(false);
    // The same request replayed under another event id (a receiver deduplicating by it would take it again).
    expect(verifySignature(SECRET, signature as string, '4712', seen.body, WALL_START_S)).toBe(false);
    expect(r.accepted).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0); // the timeout timer was cancelled
  });

  it('keeps the path and query of the URL and stamps the clock wall time in seconds', async () => {
    const r = await receiver();
    const clock = new ManualClock();
    const c = client({ url: `${r.url}?token=${URL_TOKEN}&x=1`, secret: SECRET }, clock);
    clock.advance(90_500);
    expect((await c.post('{}', 1)).ok).toBe(true);
    const seen = r.received[0]!;
    expect(seen.path).toBe(`/hook?token=${URL_TOKEN}&x=1`);
    expect(seen.headers['x-smppd-timestamp']).toBe(String(WALL_START_S + 90));
    expect(verifySignature(SECRET, seen.headers[SIGNATURE_HEADER] as string, String(seen.headers['x-smppd-event-id']), '{}', WALL_START_S + 90)).toBe(true);
  });

  it('sends no signature header without a secret', async () => {
    const r = await receiver();
    const c = client({ url: r.url });
    expect((await c.post(BODY, 1)).ok).toBe(true);
    expect(r.received[0]!.headers[SIGNATURE_HEADER]).toBeUndefined();
    expect(r.received[0]!.headers['x-smppd-event-id']).toBe('1');
  });

  it('any 2xx is ok', async () => {
    const r = await receiver();
    r.setBehaviour((_req, i) => ({ status: [200, 201, 202, 204][i]!, ...(i === 3 ? { body: '' } : {}) }));
    const c = client({ url: r.url });
    for (const status of [200, 201, 202, 204]) expect(await c.post(BODY, status)).toEqual({ ok: true, status, ms: 0 });
  });

  it('a 500 is a status failure', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ status: 500 }));
    const c = client({ url: r.url });
    expect(await c.post(BODY, 1)).toEqual({ ok: false, failure: 'status', status: 500, ms: 0 });
    expect(r.received).toHaveLength(1);
    expect(r.accepted).toHaveLength(0);
  });

  it('a 302 is a status failure and the redirect is not followed', async () => {
    const r = await receiver();
    r.setBehaviour((req) => (req.path === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 }));
    const c = client({ url: r.url });
    expect(await c.post(BODY, 1)).toEqual({ ok: false, failure: 'status', status: 302, ms: 0 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(r.received.map((q) => q.path)).toEqual(['/hook']);
  });

  it('a receiver that never answers is a timeout when the clock passes timeoutMs (no sleeping for it)', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ hang: true }));
    const clock = new ManualClock();
    const c = client({ url: `${r.url}?token=${URL_TOKEN}`, secret: SECRET, timeoutMs: 30_000 }, clock);

    const pending = c.post(BODY, 1);
    await r.waitForReceived(1);
    clock.advance(29_999);
    expect((await settled(pending)).done).toBe(false);
    clock.advance(1);

    const outcome = await pending;
    expect(outcome).toMatchObject({ ok: false, failure: 'timeout', ms: 30_000 });
    expectNoSecrets(outcome);
    expect(clock.pendingTimers).toBe(0);
  });

  it('the connection is usable again after a timeout', async () => {
    const r = await receiver();
    r.setBehaviour((_req, i) => (i === 0 ? { hang: true } : { status: 200 }));
    const clock = new ManualClock();
    const c = client({ url: r.url, timeoutMs: 1_000 }, clock);
    const first = c.post(BODY, 1);
    await r.waitForReceived(1);
    clock.advance(1_000);
    expect(await first).toMatchObject({ failure: 'timeout' });
    expect(await c.post(BODY, 2)).toMatchObject({ ok: true, status: 200 });
  });

  it('a stopped receiver is a network failure, and posts succeed again after it restarts', async () => {
    const r = await receiver();
    const c = client({ url: `${r.url}?token=${URL_TOKEN}`, secret: SECRET });
    expect((await c.post(BODY, 1)).ok).toBe(true);
    await r.stop();

    const outcome = await c.post(BODY, 2);
    expect(outcome).toMatchObject({ ok: false, failure: 'network' });
    expect(outcome.ok === false && outcome.failure === 'network' ? outcome.error : '').toMatch(/ECONNREFUSED/);
    expectNoSecrets(outcome);

    await r.restart();
    expect((await c.post(BODY, 3)).ok).toBe(true);
    expect(r.accepted).toHaveLength(2);
  });

  it('a reset socket is a network failure', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ destroy: true }));
    const c = client({ url: `${r.url}?token=${URL_TOKEN}`, secret: SECRET });
    const outcome = await c.post(BODY, 1);
    expect(outcome).toMatchObject({ ok: false, failure: 'network' });
    expect(outcome.ok === false && 'error' in outcome ? outcome.error : '').toMatch(/^[A-Z_]+: /);
    expectNoSecrets(outcome);
    expect(r.received).toHaveLength(1);
  });

  describe('https', () => {
    it('fails with tls when the server certificate is signed by an unknown CA', async () => {
      const r = await receiver({ tls: SERVER_TLS });
      const c = client({ url: `${r.url}?token=${URL_TOKEN}`, secret: SECRET });
      const outcome = await c.post(BODY, 1);
      expect(outcome).toMatchObject({ ok: false, failure: 'tls' });
      expect(outcome.ok === false && 'error' in outcome ? outcome.error : '').toMatch(/^UNABLE_TO_VERIFY_LEAF_SIGNATURE: /);
      expectNoSecrets(outcome);
      expect(r.received).toHaveLength(0);
    });

    it('succeeds with the private CA as ca, and verifies the name (localhost and 127.0.0.1 are in the certificate)', async () => {
      const r = await receiver({ tls: SERVER_TLS });
      const c = client({ url: r.url, ca: TEST_CA, secret: SECRET });
      expect(await c.post(BODY, 1)).toEqual({ ok: true, status: 200, ms: 0 });
      expect(r.received[0]!.body).toBe(BODY);
      expect(c.origin).toBe(`https://127.0.0.1:${r.port}`);
    });

    // 127.0.0.2 is loopback too on Linux (not on macOS), and the certificate does not name it.
    it.runIf(process.platform === 'linux')('fails with tls when the name does not match, even with the right CA', async () => {
      const r = await receiver({ tls: SERVER_TLS, host: '127.0.0.2' });
      const c = client({ url: `${r.url}?token=${URL_TOKEN}`, ca: TEST_CA, secret: SECRET });
      const outcome = await c.post(BODY, 1);
      expect(outcome).toMatchObject({ ok: false, failure: 'tls' });
      expect(outcome.ok === false && 'error' in outcome ? outcome.error : '').toMatch(/^ERR_TLS_CERT_ALTNAME_INVALID: /);
      expectNoSecrets(outcome);
      expect(r.received).toHaveLength(0);
    });

    it('an https URL against a plain-HTTP port is a tls failure', async () => {
      const r = await receiver();
      const c = client({ url: r.url.replace('http:', 'https:'), ca: TEST_CA });
      const outcome = await c.post(BODY, 1);
      expect(outcome).toMatchObject({ ok: false, failure: 'tls' });
      expect(outcome.ok === false && 'error' in outcome ? outcome.error : '').not.toMatch(/\n/);
    });
  });

  it('20 sequential posts reuse keep-alive connections: at most `concurrency` TCP connections', async () => {
    const r = await receiver();
    const c = client({ url: r.url, concurrency: 2 });
    for (let i = 0; i < 20; i++) expect((await c.post(BODY, i)).ok).toBe(true);
    expect(r.accepted).toHaveLength(20);
    expect(r.connections).toBeGreaterThanOrEqual(1);
    expect(r.connections).toBeLessThanOrEqual(2);
  });

  it('keeps the connection after a response with a body larger than a socket read', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ status: 200, body: 'x'.repeat(200_000) }));
    const c = client({ url: r.url });
    for (let i = 0; i < 3; i++) expect((await c.post(BODY, i)).ok).toBe(true);
    expect(r.connections).toBe(1);
  });

  it('never has more than `concurrency` requests in flight at the receiver', async () => {
    const r = await receiver();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    r.setBehaviour(async () => { await gate; return { status: 200 }; });
    const c = client({ url: r.url, concurrency: 3, timeoutMs: 60_000 });

    const posts = Array.from({ length: 10 }, (_, i) => c.post(BODY, i));
    await r.waitForReceived(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.received).toHaveLength(3);
    expect(r.inFlight).toBe(3);

    release();
    const outcomes = await Promise.all(posts);
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(r.accepted).toHaveLength(10);
    expect(r.maxInFlight).toBe(3);
    expect(r.connections).toBeLessThanOrEqual(3);
  });

  it('with a hanging receiver, queued posts time out on the clock too, and at most `concurrency` were ever in flight', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ hang: true }));
    const clock = new ManualClock();
    const c = client({ url: r.url, concurrency: 3, timeoutMs: 10_000 }, clock);

    const posts = Array.from({ length: 6 }, (_, i) => c.post(BODY, i));
    await r.waitForReceived(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(r.received).toHaveLength(3);
    clock.advance(10_000);
    const outcomes = await Promise.all(posts);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.failure))).toEqual(Array(6).fill('timeout'));
    expect(r.maxInFlight).toBe(3);
  });

  it('close ends pending posts as network failures and later posts fail at once', async () => {
    const r = await receiver();
    r.setBehaviour(() => ({ hang: true }));
    const c = client({ url: r.url });
    const pending = c.post(BODY, 1);
    await r.waitForReceived(1);
    await c.close();
    expect(await pending).toMatchObject({ ok: false, failure: 'network' });
    expect(await c.post(BODY, 2)).toMatchObject({ ok: false, failure: 'network' });
    expect(r.received).toHaveLength(1);
  });

  it('logs only the origin: no path or query in `origin`, and no secret in any error', async () => {
    const r = await receiver();
    const c = client({ url: `${r.url}?token=${URL_TOKEN}`, secret: SECRET });
    expect(c.origin).toBe(`http://127.0.0.1:${r.port}`);
    expect(c.origin).not.toContain(URL_TOKEN);
  });

  it('refuses a URL that is not http(s) or carries credentials, without echoing it', () => {
    const clock = new ManualClock();
    const make = (url: string) => () => new WebhookClient({ url, timeoutMs: 1000, concurrency: 1 }, { clock, userAgent: USER_AGENT });
    expect(make(`ftp://example.com/hook?token=${URL_TOKEN}`)).toThrow(/https:\/\/ or http:\/\//);
    expect(make(`not a url ${URL_TOKEN}`)).toThrow(/not a valid URL/);
    expect(make(`https://user:${URL_TOKEN}@example.com/hook`)).toThrow(/user:password/);
    for (const url of [`ftp://example.com/hook?token=${URL_TOKEN}`, `not a url ${URL_TOKEN}`, `https://user:${URL_TOKEN}@example.com/hook`]) {
      try {
        make(url)();
      } catch (e) {
        expect(String((e as Error).message)).not.toContain(URL_TOKEN);
      }
    }
  });
});
