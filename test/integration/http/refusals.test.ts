/**
 * What is refused before a route runs, over a bare socket: each answer is a status line and the
 * exact five-field body (never fastify's or Node's own `{error, message, statusCode}` or an empty
 * body), and the connection is closed. The parser's refusals (a malformed request line or
 * chunked body, headers too large), the timeouts (headers: Node's check on real time; body:
 * the listener's deadline on the harness's ManualClock), an unsupported Expect, a missing Host,
 * two Hosts or an invalid one,
 * a CONNECT, and the 503 while the server is closing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SWEEP_MS } from '../../../src/ingress/http/deadlines.js';
import { TOKENS, listeningHarness, type Harness, type HarnessOptions } from '../../support/http.js';
import { RawConnection, exchange } from '../../support/raw-http.js';
import { until } from '../../support/engine.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function listening(o: HarnessOptions = {}): Promise<{ h: Harness; port: number }> {
  const listening = await listeningHarness(o);
  h = listening.h;
  return listening;
}

const AUTH = `Authorization: Bearer ${TOKENS.app}\r\n`;
const SEND = JSON.stringify({ senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' });

/** The body every refusal has: the five fields, nothing else. */
const body = (status: number, error: string, errorCode: string, message: string, requestUri: string) => ({ status, error, message, errorCode, requestUri });

/** Counts the requests Node has handed on (their headers are whole), so a test knows its requests arrived. */
function countRequests(h: Harness): { seen: number } {
  const counter = { seen: 0 };
  h.app.server.on('request', () => { counter.seen++; });
  return counter;
}

describe('refusals the HTTP parser makes, in the five-field body', () => {
  it('a malformed request line is 400 BAD_REQUEST with an empty requestUri, and the connection closes', async () => {
    const { port } = await listening();
    const res = await exchange(port, 'GARBAGE\r\n\r\n');
    expect(res.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toEqual(body(400, 'Bad Request', 'BAD_REQUEST', 'malformed HTTP request: Invalid method encountered', ''));
    await res.connection.closed;
    expect(h?.refused).toEqual(['BAD_REQUEST']);
  });

  it('a malformed chunked body is 400 BAD_REQUEST naming the request\'s path', async () => {
    const { port } = await listening();
    const res = await exchange(port, `POST /sms/sendSms?x=1 HTTP/1.1\r\nHost: a\r\n${AUTH}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`);
    expect(res.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(res.body)).toEqual(body(400, 'Bad Request', 'BAD_REQUEST', 'malformed HTTP request: Invalid character in chunk size', '/sms/sendSms'));
    await res.connection.closed;
  });

  it('headers over 16 KiB are 431 HEADERS_TOO_LARGE, with an empty requestUri (the headers were never read whole)', async () => {
    const { port } = await listening();
    const res = await exchange(port, `GET /sms/status/abc?token=secret HTTP/1.1\r\nHost: a\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(res.body)).toEqual(body(431, 'Request Header Fields Too Large', 'HEADERS_TOO_LARGE', 'the request line and headers are larger than 16384 bytes', ''));
    await res.connection.closed;
    expect(h?.refused).toEqual(['HEADERS_TOO_LARGE']);
  });

  it('headers that do not arrive within http.headersTimeoutSeconds are 408 REQUEST_TIMEOUT; so is a connection that sends nothing', async () => {
    const { port } = await listening({ listener: { headersTimeoutMs: 1000 } });
    const partial = new RawConnection(port);
    const silent = new RawConnection(port);
    await Promise.all([partial.connected, silent.connected]);
    partial.write(`POST /sms/sendSms HTTP/1.1\r\nHost: a\r\n${AUTH}`);
    const expected = body(408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request headers did not arrive within 1 s (http.headersTimeoutSeconds)', '');
    for (const c of [partial, silent]) {
      const res = await c.response();
      expect(res.statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(res.body)).toEqual(expected);
      await c.closed;
    }
    expect(h?.refused).toEqual(['REQUEST_TIMEOUT', 'REQUEST_TIMEOUT']);
  });
});

describe('the body deadline (ManualClock)', () => {
  it('a JSON body that stops is 408 at http.requestTimeoutSeconds after its headers, not before', async () => {
    const { h, port } = await listening({ listener: { requestTimeoutMs: 30_000 } });
    const requests = countRequests(h);
    const c = new RawConnection(port);
    await c.connected;
    c.write(`POST /sms/sendSms?x=1 HTTP/1.1\r\nHost: a\r\n${AUTH}Content-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n${SEND.slice(0, 10)}`);
    await until(() => requests.seen === 1, 5000, 'the request');
    h.clock.advance(30_000 - SWEEP_MS);
    await new Promise((r) => setTimeout(r, 100));
    expect(c.received).toBe('');
    expect(c.isClosed).toBe(false);
    h.clock.advance(2 * SWEEP_MS);
    const res = await c.response();
    expect(res.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual(body(408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the request body did not arrive within 30 s of its headers (http.requestTimeoutSeconds)', '/sms/sendSms'));
    await c.closed;
    expect(h.acceptedMessages).toHaveLength(0);
    // Nothing in the error log: a client too slow is not smppd's failure.
    expect(h.logs.filter((l) => l.includes('"level":"error"'))).toEqual([]);
  });

  it('sendbulk has the longer http.bulkRequestTimeoutSeconds', async () => {
    const { h, port } = await listening({ listener: { requestTimeoutMs: 30_000, bulkRequestTimeoutMs: 600_000 } });
    const requests = countRequests(h);
    const c = new RawConnection(port);
    await c.connected;
    c.write(`POST /sms/sendbulk HTTP/1.1\r\nHost: a\r\n${AUTH}Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 100000\r\n\r\n--XyZ\r\n`);
    await until(() => requests.seen === 1, 5000, 'the request');
    h.clock.advance(60_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(c.isClosed).toBe(false);
    h.clock.advance(600_000);
    const res = await c.response();
    expect(res.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(res.body)).toEqual(body(408, 'Request Timeout', 'REQUEST_TIMEOUT', 'the upload did not arrive within 600 s of its headers (http.bulkRequestTimeoutSeconds)', '/sms/sendbulk'));
    await c.closed;
  });

  it('a request answered before its body came (401) is closed at its deadline, with no second response', async () => {
    const { h, port } = await listening({ listener: { requestTimeoutMs: 30_000 } });
    const requests = countRequests(h);
    const c = new RawConnection(port);
    await c.connected;
    c.write(`POST /sms/sendSms HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
    await until(() => requests.seen === 1, 5000, 'the request');
    const res = await c.response();
    expect(res.status).toBe(401);
    h.clock.advance(30_000 + SWEEP_MS);
    await c.closed;
    expect(c.received.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });
});

describe('refusals before a route', () => {
  it('an Expect other than 100-continue is 417 EXPECTATION_FAILED', async () => {
    const { port } = await listening();
    const res = await exchange(port, `POST /sms/sendSms HTTP/1.1\r\nHost: a\r\n${AUTH}Expect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n${SEND}`);
    expect(res.statusLine).toBe('HTTP/1.1 417 Expectation Failed');
    expect(JSON.parse(res.body)).toEqual(body(417, 'Expectation Failed', 'EXPECTATION_FAILED',
      'the Expect header asks for what this server does not do: only 100-continue is supported', '/sms/sendSms'));
    await res.connection.closed;
    expect(h?.acceptedMessages).toHaveLength(0);
  });

  it('Expect: 100-continue is served', async () => {
    const { port } = await listening();
    const c = new RawConnection(port);
    await c.connected;
    c.write(`POST /sms/sendSms HTTP/1.1\r\nHost: a\r\n${AUTH}Expect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n`);
    await until(() => c.received.startsWith('HTTP/1.1 100 Continue\r\n\r\n'), 5000, '100 Continue');
    c.write(SEND);
    await until(() => c.received.includes('HTTP/1.1 200 OK'), 5000, 'the 200');
    c.destroy();
  });

  it('an HTTP/1.1 request without Host is 400 BAD_REQUEST; HTTP/1.0 needs none', async () => {
    const { port } = await listening();
    const res = await exchange(port, 'GET /healthz?probe=1 HTTP/1.1\r\n\r\n');
    expect(res.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(res.body)).toEqual(body(400, 'Bad Request', 'BAD_REQUEST', 'an HTTP/1.1 request needs a Host header', '/healthz'));
    await res.connection.closed;
    const old = await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    old.connection.destroy();
  });

  it('a request with two Host headers is 400 BAD_REQUEST, whatever their case or HTTP version, and nothing is stored', async () => {
    const { h, port } = await listening();
    for (const hosts of ['Host: a\r\nHost: b\r\n', 'Host: a\r\nhOST: a\r\n', 'Host: a\r\nX-Other: 1\r\nHOST: evil.example\r\n']) {
      for (const version of ['HTTP/1.1', 'HTTP/1.0']) {
        const res = await exchange(port, `POST /sms/sendSms ${version}\r\n${hosts}${AUTH}Content-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n${SEND}`);
        expect(res.statusLine, `${version} ${hosts}`).toBe('HTTP/1.1 400 Bad Request');
        expect(JSON.parse(res.body)).toEqual(body(400, 'Bad Request', 'BAD_REQUEST', 'a request carries one Host header; this one has 2 (RFC 9112 §3.2)', '/sms/sendSms'));
        await res.connection.closed;
      }
    }
    expect(h.acceptedMessages).toHaveLength(0);
    expect(h.refused).toEqual(Array(6).fill('BAD_REQUEST'));
  });

  it('a Host that is not host[:port] is 400 BAD_REQUEST; names, addresses, ports and an empty Host are served', async () => {
    const { h, port } = await listening();
    for (const host of ['a b', 'a/b', 'user@a', 'a#b', 'a:80x', 'a:80:90', '[::1', '[]:80', '[::1]x', 'a%2', 'a%zz', 'é.example', 'a\tb']) {
      const res = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      expect(res.statusLine, host).toBe('HTTP/1.1 400 Bad Request');
      expect(JSON.parse(res.body)).toEqual(body(400, 'Bad Request', 'BAD_REQUEST', 'the Host header is not host[:port] (RFC 9112 §3.2)', '/healthz'));
      await res.connection.closed;
    }
    for (const host of ['', 'a', 'api.example.com', 'localhost:8080', '127.0.0.1:', '[::1]:8080', '[fe80::1%25eth0]', 'xn--bcher-kva.example', 'a%2Db']) {
      const res = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      expect(res.status, host).toBe(200);
      res.connection.destroy();
    }
    expect(h.refused).toEqual(Array(13).fill('BAD_REQUEST'));
  });

  it('a CONNECT is 404 NOT_FOUND with an empty requestUri (its target is no path), and the connection closes', async () => {
    const { port } = await listening();
    const res = await exchange(port, 'CONNECT hooks.example.com:443 HTTP/1.1\r\nHost: hooks.example.com:443\r\n\r\n');
    expect(res.statusLine).toBe('HTTP/1.1 404 Not Found');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(res.body)).toEqual(body(404, 'Not Found', 'NOT_FOUND', 'no route CONNECT: smppd is not a proxy', ''));
    await res.connection.closed;
    expect(h?.refused).toEqual(['NOT_FOUND']);
  });

  it('while the server closes, a request on a connection still open is 503 SHUTTING_DOWN', async () => {
    const { h, port } = await listening();
    // Headers under way: the connection is not idle, so closing the server leaves it open.
    const c = new RawConnection(port);
    await c.connected;
    c.write(`POST /sms/sendSms HTTP/1.1\r\nHost: a\r\n${AUTH}`);
    await new Promise((r) => setTimeout(r, 50));
    const closing = h.app.close();
    await until(() => !h.app.server.listening, 5000, 'the server to stop listening');
    c.write(`Content-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n${SEND}`);
    const res = await c.response();
    expect(res.statusLine).toBe('HTTP/1.1 503 Service Unavailable');
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toEqual(body(503, 'Service Unavailable', 'SHUTTING_DOWN', 'smppd is stopping and takes no new request: retry on a new connection', '/sms/sendSms'));
    await c.closed;
    await closing;
    expect(h.acceptedMessages).toHaveLength(0);
    expect(h.refused).toEqual(['SHUTTING_DOWN']);
  });
});
