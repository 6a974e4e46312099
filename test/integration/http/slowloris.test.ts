/**
 * Slow clients cannot hold connections: over real sockets, 2,000 connections that send their
 * headers and then trickle or stop their body are answered 408 and closed at their deadline (the
 * listener's sweep on the harness's ManualClock: not a moment before, and all of them after);
 * 2,000 that trickle their headers are closed at http.headersTimeoutSeconds (Node's check, real
 * time); a well-behaved client is served meanwhile and afterwards. And with http.maxConnections
 * reached, a new connection is closed as soon as it is accepted while the open ones keep working,
 * so a flood holds at most maxConnections descriptors; with http.maxConnectionsPerAddress, a flood
 * from one address is closed the same way past that cap, and other addresses are served. A client that reads no response is closed
 * at http.requestTimeoutSeconds after the response was written, and one that pipelines more than
 * 16 requests behind the one being answered is closed at once.
 *
 * Why 2,000: more than a common default open-file limit (1,024), so it is a flood that would lock
 * out every other client of a daemon without these limits; and few enough for the test machine:
 * each costs two descriptors in this process (client and server ends), 4,000 of the 20,000 it
 * allows. Connections are opened 200 at a time so that the listen backlog never overflows.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SWEEP_MS } from '../../../src/ingress/http/deadlines.js';
import { TOKENS, bearer, listeningHarness, type Harness, type HarnessOptions } from '../../support/http.js';
import { RawConnection, parseResponse } from '../../support/raw-http.js';
import { until } from '../../support/engine.js';

const FLOOD = 2000;
const BATCH = 200;

let h: Harness | undefined;
const open: RawConnection[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) c.destroy();
  await h?.close();
  h = undefined;
});

async function listening(o: HarnessOptions): Promise<{ h: Harness; port: number; base: string }> {
  const listening = await listeningHarness(o);
  h = listening.h;
  return listening;
}

/** `count` connections (from the local address `from`, if given), opened a batch at a time, each sent `first` once connected. */
async function connections(port: number, count: number, first: (i: number) => string, from?: string): Promise<RawConnection[]> {
  const made: RawConnection[] = [];
  for (let i = 0; i < count; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - i) }, () => new RawConnection(port, undefined, from));
    open.push(...batch);
    await Promise.allSettled(batch.map((c) => c.connected));
    batch.forEach((c, j) => c.write(first(i + j)));
    made.push(...batch);
  }
  return made;
}

/** Writes one byte every 250 ms on each connection `which` picks, until stopped. */
function trickle(conns: readonly RawConnection[], which: (i: number) => boolean, byte: string): () => void {
  const timer = setInterval(() => conns.forEach((c, i) => { if (which(i) && !c.isClosed) c.write(byte); }), 250);
  return () => clearInterval(timer);
}

const SEND = JSON.stringify({ senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' });

async function wellBehaved(base: string): Promise<number> {
  const res = await fetch(`${base}/sms/sendSms`, { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: SEND });
  await res.text();
  return res.status;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('slow clients', () => {
  it('2,000 connections whose body trickles or stops are answered 408 and closed at http.requestTimeoutSeconds; others are served', async () => {
    const { h, port, base } = await listening({ listener: { requestTimeoutMs: 30_000, maxConnections: 3 * FLOOD } });
    let seen = 0;
    h.app.server.on('request', () => { seen++; });
    // A body of 1,000 bytes announced, 10 sent; then every other connection adds a byte every 250 ms.
    const slow = await connections(port, FLOOD, () =>
      `POST /sms/sendSms HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TOKENS.app}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n${SEND.slice(0, 10)}`);
    const stop = trickle(slow, (i) => i % 2 === 1, ' ');
    try {
      await until(() => seen === FLOOD, 60_000, 'every slow request to reach the server');
      expect(await wellBehaved(base)).toBe(200);

      // Just before the deadline: every slow connection is still open and unanswered.
      h.clock.advance(30_000 - SWEEP_MS);
      await sleep(500);
      expect(slow.filter((c) => c.isClosed || c.received !== '')).toHaveLength(0);
      expect(await wellBehaved(base)).toBe(200);

      // Past it: each is answered 408 and closed by the server.
      h.clock.advance(2 * SWEEP_MS);
      await until(() => slow.every((c) => c.isClosed), 60_000, 'every slow connection to be closed');
      const answers = new Set(slow.map((c) => { const r = parseResponse(c.received); return r ? `${r.statusLine} ${r.body}` : `none: ${c.received.slice(0, 80)}`; }));
      expect([...answers]).toEqual([`HTTP/1.1 408 Request Timeout ${JSON.stringify({
        status: 408, error: 'Request Timeout', message: 'the request body did not arrive within 30 s of its headers (http.requestTimeoutSeconds)',
        errorCode: 'REQUEST_TIMEOUT', requestUri: '/sms/sendSms',
      })}`]);
      expect(h.refused.filter((r) => r === 'REQUEST_TIMEOUT')).toHaveLength(FLOOD);
    } finally {
      stop();
    }
    expect(await wellBehaved(base)).toBe(200);
    // The flood's server ends are gone; the well-behaved client's keep-alive connection may remain.
    await until(() => h.connections.open <= 1, 10_000, 'the server to hold no slow connection');
    expect(h.acceptedMessages).toHaveLength(3);
  }, 180_000);

  it('2,000 connections that trickle their headers are answered 408 and closed at http.headersTimeoutSeconds; others are served', async () => {
    const { h, port, base } = await listening({ listener: { headersTimeoutMs: 2000, maxConnections: 3 * FLOOD } });
    const opened = Date.now();
    const closedAt: number[] = [];
    const slow = await connections(port, FLOOD, () => `POST /sms/sendSms HTTP/1.1\r\nHost: a\r\n`);
    slow.forEach((c, i) => void c.closed.then(() => { closedAt[i] = Date.now(); }));
    const stop = trickle(slow, () => true, 'X');
    try {
      expect(await wellBehaved(base)).toBe(200);
      await until(() => slow.every((c) => c.isClosed), 60_000, 'every slow connection to be closed');
    } finally {
      stop();
    }
    // Not before the timeout: each was closed 2 s or more after the first was opened (Node counts from each connection's start, later still).
    expect(Math.min(...closedAt) - opened).toBeGreaterThanOrEqual(2000);
    const answers = new Set(slow.map((c) => parseResponse(c.received)?.body ?? `none: ${c.received.slice(0, 80)}`));
    expect([...answers]).toEqual([JSON.stringify({
      status: 408, error: 'Request Timeout', message: 'the request headers did not arrive within 2 s (http.headersTimeoutSeconds)',
      errorCode: 'REQUEST_TIMEOUT', requestUri: '',
    })]);
    expect(await wellBehaved(base)).toBe(200);
    await until(() => h.connections.open <= 1, 10_000, 'the server to hold no slow connection');
  }, 180_000);

  it('a connection whose client reads no response is closed at http.requestTimeoutSeconds after the response was written; others are served', async () => {
    // A response far larger than the socket buffers hold.
    const { h, port, base } = await listening({ listener: { requestTimeoutMs: 30_000 }, metricsText: `# ${'x'.repeat(16 * 1024 * 1024)}\n` });
    // The server's end of the connection (the client's, paused, does not see its own close).
    let held: Socket | undefined;
    h.app.server.on('request', (req: IncomingMessage) => { held ??= req.socket; });
    const c = new RawConnection(port);
    open.push(c);
    await c.connected;
    c.socket.pause();
    c.write('GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => held !== undefined, 5000, 'the request');
    await sleep(500);
    expect(held!.writableLength).toBeGreaterThan(0);

    h.clock.advance(30_000 - SWEEP_MS);
    await sleep(500);
    expect(held!.destroyed).toBe(false);
    expect(await wellBehaved(base)).toBe(200);

    h.clock.advance(2 * SWEEP_MS);
    await until(() => held!.destroyed, 10_000, 'the connection of the client that does not read to be closed');
    expect(h.refused).toEqual(['RESPONSE_NOT_TAKEN']);
    expect(await wellBehaved(base)).toBe(200);
  }, 60_000);

  it('a connection with more than 16 requests pipelined behind the one being answered is closed; 16 are served', async () => {
    const { h, port } = await listening({});
    const sockets: Socket[] = [];
    h.app.server.on('request', (req: IncomingMessage) => { if (!sockets.includes(req.socket)) sockets.push(req.socket); });

    // 2,000 GET /openapi.json (tens of KB each) in one write, none read: closed as the 18th arrives.
    const flood = new RawConnection(port);
    open.push(flood);
    await flood.connected;
    flood.socket.pause();
    flood.write('GET /openapi.json HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(2000));
    await until(() => sockets[0]?.destroyed === true, 10_000, 'the pipelining connection to be closed');
    expect(h.refused).toEqual(['PIPELINED_TOO_DEEP']);

    // One answered and 16 waiting: all served, in order, on a connection left open.
    const ok = new RawConnection(port);
    open.push(ok);
    await ok.connected;
    ok.write(Array.from({ length: 17 }, (_, i) => `GET /healthz?n=${i} HTTP/1.1\r\nHost: a\r\n\r\n`).join(''));
    await until(() => (ok.received.match(/HTTP\/1\.1 200 OK/g) ?? []).length === 17, 10_000, 'the 17 answers');
    await sleep(200);
    expect(ok.isClosed).toBe(false);
    expect(h.refused).toEqual(['PIPELINED_TOO_DEEP']);
  }, 60_000);

  it('at http.maxConnections a new connection is closed at once, the open ones keep working, and a freed slot is taken again', async () => {
    const MAX = 50;
    const { h, port, base } = await listening({ listener: { maxConnections: MAX, keepAliveTimeoutMs: 120_000, headersTimeoutMs: 120_000 } });
    // MAX keep-alive connections, each served once and now idle.
    const held = await connections(port, MAX, () => 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => held.every((c) => parseResponse(c.received)?.status === 200), 10_000, 'the held connections\' first answers');

    // A flood of 500 more: each is closed without a byte, long before any timeout could.
    const flood = await connections(port, 500, () => 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => flood.every((c) => c.isClosed), 10_000, 'the flood\'s connections to be closed');
    expect(flood.filter((c) => c.received !== '')).toEqual([]);
    expect(await new Promise<number>((resolve, reject) => h.app.server.getConnections((e, n) => (e ? reject(e) : resolve(n))))).toBe(MAX);
    expect(h.refused.filter((r) => r === 'MAX_CONNECTIONS')).toHaveLength(500);
    // One warning, not one a connection.
    expect(h.logs.filter((l) => l.includes('http_max_connections'))).toHaveLength(1);

    // The open connections still work.
    const first = held[0]!;
    const before = first.received.length;
    first.write('GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n');
    await until(() => parseResponse(first.received.slice(before))?.status === 200, 10_000, 'a second answer on a held connection');

    // A slot freed is a slot a well-behaved client gets.
    held.slice(0, 5).forEach((c) => c.destroy());
    await until(() => h.connections.open <= MAX - 5, 10_000, 'the freed connections to close');
    expect(await wellBehaved(base)).toBe(200);
  }, 120_000);

  it('at http.maxConnectionsPerAddress a new connection from that address is closed at once; other addresses are served', async () => {
    const PER = 10;
    const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n';
    const { h, port } = await listening({ listener: { maxConnections: 100, maxConnectionsPerAddress: PER, keepAliveTimeoutMs: 120_000, headersTimeoutMs: 120_000 } });
    const served = (conns: readonly RawConnection[]) => conns.every((c) => parseResponse(c.received)?.status === 200);
    // PER keep-alive connections from 127.0.0.1, each served once and now idle.
    const held = await connections(port, PER, () => HEALTHZ, '127.0.0.1');
    await until(() => served(held), 10_000, 'the held connections\' first answers');

    // A flood of 300 more from the same address, far under maxConnections: each closed without a byte.
    const flood = await connections(port, 300, () => HEALTHZ, '127.0.0.1');
    await until(() => flood.every((c) => c.isClosed), 10_000, 'the flood\'s connections to be closed');
    expect(flood.filter((c) => c.received !== '')).toEqual([]);
    expect(h.refused.filter((r) => r === 'MAX_CONNECTIONS_PER_ADDRESS')).toHaveLength(300);
    expect(h.refused.filter((r) => r === 'MAX_CONNECTIONS')).toEqual([]);
    // The refused connections were never counted open.
    expect(h.connections.open).toBe(PER);
    // One warning, naming the address, not one a connection.
    const warnings = h.logs.filter((l) => l.includes('http_max_connections_per_address')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn', address: '127.0.0.1', maxConnectionsPerAddress: PER, dropped: 1 });

    // Another address is served, up to its own PER connections.
    const other = await connections(port, PER, () => HEALTHZ, '127.0.0.2');
    await until(() => served(other), 10_000, 'the other address\'s answers');
    expect(other.some((c) => c.isClosed)).toBe(false);

    // The held connections still work, and a slot freed is a slot the address gets again.
    const first = held[0]!;
    const before = first.received.length;
    first.write(HEALTHZ);
    await until(() => parseResponse(first.received.slice(before))?.status === 200, 10_000, 'a second answer on a held connection');
    held.slice(1, 4).forEach((c) => c.destroy());
    await until(() => h.connections.open <= 2 * PER - 3, 10_000, 'the freed connections to close');
    const again = await connections(port, 3, () => HEALTHZ, '127.0.0.1');
    await until(() => served(again), 10_000, 'the freed slots\' answers');
    expect(h.refused.filter((r) => r === 'MAX_CONNECTIONS_PER_ADDRESS')).toHaveLength(300);
  }, 120_000);
});
