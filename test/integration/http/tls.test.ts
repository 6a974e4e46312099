/**
 * TLS on the API listener, with the test certificates of test/fixtures/tls, configured as an
 * operator would (http.tls in a config file, paths relative to it): the API is served over TLS
 * and not in clear; refusals made before a route keep their five-field body over TLS; the
 * handshake and then the headers each have http.headersTimeoutSeconds; with requestClientCert a
 * client without a certificate signed by ca cannot complete a request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { listenerSettings } from '../../../src/ingress/http/listener.js';
import { TOKENS, listeningHarness, type Harness } from '../../support/http.js';
import { RawConnection, exchange } from '../../support/raw-http.js';

const TLS_DIR = join(import.meta.dirname, '../../fixtures/tls');
const CA = readFileSync(join(TLS_DIR, 'ca.crt'));
const CLIENT = { cert: readFileSync(join(TLS_DIR, 'client.crt')), key: readFileSync(join(TLS_DIR, 'client.key')) };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The harness listening with the http.tls (and `more` http keys) of a config file in test/fixtures/tls. */
async function listeningTls(tls: string, more = ''): Promise<number> {
  const config = await parseConfig(`upstreams: [{ name: p, host: 127.0.0.1, systemId: s, password: pw }]\nhttp: { ${more}tls: ${tls} }\n`, TLS_DIR);
  const listening = await listeningHarness({ listener: listenerSettings(config.http) });
  h = listening.h;
  return listening.port;
}

const SEND = JSON.stringify({ senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hello', messageType: 'TEXT' });
const sendSms = `POST /sms/sendSms HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKENS.app}\r\nContent-Type: application/json\r\nContent-Length: ${SEND.length}\r\n\r\n${SEND}`;

describe('http.tls', () => {
  it('serves the API over TLS, and nothing in clear', async () => {
    const port = await listeningTls('{ cert: server.crt, key: server.key }');
    const res = await exchange(port, sendSms, { ca: CA });
    expect(res.status).toBe(200);
    expect((res.connection.socket as TLSSocket).getProtocol()).toMatch(/^TLSv1\.[23]$/);
    res.connection.destroy();
    expect(h?.acceptedMessages).toHaveLength(1);

    const clear = new RawConnection(port);
    await clear.connected;
    clear.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await clear.closed;
    expect(clear.received).not.toMatch(/^HTTP\//);
  });

  it('keeps the five-field body for what the parser refuses', async () => {
    const port = await listeningTls('{ cert: server.crt, key: server.key }');
    const res = await exchange(port, `GET /sms/status/x HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`, { ca: CA });
    expect(res.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(JSON.parse(res.body)).toEqual({
      status: 431, error: 'Request Header Fields Too Large', message: 'the request line and headers are larger than 16384 bytes', errorCode: 'HEADERS_TOO_LARGE', requestUri: '',
    });
    await res.connection.closed;
  });

  it('a client has headersTimeoutSeconds for its handshake and as long again for its headers; one that never starts its handshake is closed', async () => {
    const port = await listeningTls('{ cert: server.crt, key: server.key }', 'headersTimeoutSeconds: 3, ');
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    // Two thirds of the limit before its ClientHello, two thirds after its handshake: more than the limit in all, and served.
    const raw = netConnect({ host: '127.0.0.1', port });
    await new Promise((resolve) => raw.once('connect', resolve));
    await sleep(2000);
    const secure = tlsConnect({ socket: raw, ca: CA, servername: 'localhost' });
    await new Promise((resolve, reject) => { secure.once('secureConnect', resolve); secure.once('error', reject); });
    await sleep(2000);
    let received = '';
    secure.setEncoding('latin1');
    secure.on('data', (chunk: string) => { received += chunk; });
    secure.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => { if (received.includes('\r\n\r\n')) { clearInterval(poll); resolve(); } }, 10);
      secure.once('close', () => { clearInterval(poll); reject(new Error(`closed; received ${JSON.stringify(received)}`)); });
    });
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    secure.destroy();

    // No handshake at all: closed without a byte at the handshake's limit, not before.
    const opened = Date.now();
    const silent = new RawConnection(port);
    await silent.connected;
    await silent.closed;
    expect(Date.now() - opened).toBeGreaterThanOrEqual(2900);
    expect(silent.received).toBe('');
  }, 30_000);

  it('with requestClientCert, a client certificate signed by ca is required', async () => {
    const port = await listeningTls('{ cert: server.crt, key: server.key, ca: ca.crt, requestClientCert: true }');
    const withCert = await exchange(port, sendSms, { ca: CA, ...CLIENT });
    expect(withCert.status).toBe(200);
    withCert.connection.destroy();

    // TLS 1.3: the client's side of the handshake completes; the server refuses it on the first record.
    const without = new RawConnection(port, { ca: CA });
    without.connected.then(() => without.write(sendSms), () => {});
    const failure = await without.closed;
    expect(without.received).toBe('');
    expect(failure?.message).toMatch(/certificate required|ECONNRESET|socket hang up/i);
    expect(h?.acceptedMessages).toHaveLength(1);
  });
});
