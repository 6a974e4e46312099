/**
 * The HTTP listener's keys: timeouts, maxConnections and TLS on the API listener. Bad values are
 * refused with their key path; TLS files are read relative to the config file, and a certificate
 * and key that do not make a TLS server are found when the config loads, not when it listens.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatMaskedConfig, parseConfig } from '../../../src/config/load.js';
import { listenerSettings } from '../../../src/ingress/http/listener.js';
import { configRefusal } from '../../support/config.js';

const TLS_DIR = join(import.meta.dirname, '../../fixtures/tls');
const dir = mkdtempSync(join(tmpdir(), 'smppd-http-config-'));
for (const f of ['ca.crt', 'server.crt', 'server.key', 'client.key']) copyFileSync(join(TLS_DIR, f), join(dir, f));
writeFileSync(join(dir, 'empty.pem'), '\n');
// A good certificate, then one whose base64 is damaged.
writeFileSync(join(dir, 'broken.pem'), `${readFileSync(join(TLS_DIR, 'ca.crt'), 'utf8')}-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----\n`);

const base = `upstreams:
  - { name: provider, host: 127.0.0.1, systemId: smppclient1, password: pw }
`;
const http = (yaml: string) => `${base}http: ${yaml}\n`;
const problem = (yaml: string) => configRefusal(() => parseConfig(yaml, dir));

describe('http timeouts, maxConnections and maxConnectionsPerAddress', () => {
  it('take their values in seconds and become the listener\'s milliseconds', async () => {
    const c = await parseConfig(http('{ headersTimeoutSeconds: 2.5, requestTimeoutSeconds: 20, bulkRequestTimeoutSeconds: 900, keepAliveTimeoutSeconds: 65, maxConnections: 200, maxConnectionsPerAddress: 20 }'), dir);
    expect(listenerSettings(c.http)).toEqual({
      headersTimeoutMs: 2500, requestTimeoutMs: 20_000, bulkRequestTimeoutMs: 900_000, keepAliveTimeoutMs: 65_000, maxConnections: 200, maxConnectionsPerAddress: 20,
    });
  });

  it('maxConnectionsPerAddress is 0 (no cap per address) by default, and may equal maxConnections', async () => {
    expect((await parseConfig(base, dir)).http.maxConnectionsPerAddress).toBe(0);
    expect((await parseConfig(http('{ maxConnections: 50, maxConnectionsPerAddress: 50 }'), dir)).http.maxConnectionsPerAddress).toBe(50);
  });

  it.each([
    ['headersTimeoutSeconds: 0', 'http.headersTimeoutSeconds: must be a number of seconds from 1 to 300'],
    ['requestTimeoutSeconds: 7200', 'http.requestTimeoutSeconds: must be a number of seconds from 1 to 3600'],
    ['keepAliveTimeoutSeconds: 0', 'http.keepAliveTimeoutSeconds: must be a number of seconds from 1 to 600'],
    ['maxConnections: 0', 'http.maxConnections: must be a whole number from 1 to 1000000'],
    ['maxConnections: 10.5', 'http.maxConnections: must be a whole number from 1 to 1000000'],
    ['maxConnectionsPerAddress: -1', 'http.maxConnectionsPerAddress: must be a whole number from 0 to 1000000'],
    ['maxConnectionsPerAddress: 2.5', 'http.maxConnectionsPerAddress: must be a whole number from 0 to 1000000'],
    ['maxConnectionsPerAddress: 1001', 'http.maxConnectionsPerAddress: must be ≤ maxConnections (or 0: no cap per address)'],
    ['{ maxConnections: 10, maxConnectionsPerAddress: 11 }', 'http.maxConnectionsPerAddress: must be ≤ maxConnections (or 0: no cap per address)'],
    ['{ requestTimeoutSeconds: 60, bulkRequestTimeoutSeconds: 30 }', 'http.bulkRequestTimeoutSeconds: must be ≥ requestTimeoutSeconds'],
  ])('%s is refused', async (yaml, message) => {
    expect(await problem(http(yaml.startsWith('{') ? yaml : `{ ${yaml} }`))).toContain(message);
  });
});

describe('http.tls', () => {
  it('reads cert, key and ca relative to the config file; check-config prints their sizes only', async () => {
    const c = await parseConfig(http('{ tls: { cert: server.crt, key: server.key, ca: ca.crt, requestClientCert: true } }'), dir);
    expect(c.http.tls).toEqual({
      cert: readFileSync(join(TLS_DIR, 'server.crt')), key: readFileSync(join(TLS_DIR, 'server.key')), ca: readFileSync(join(TLS_DIR, 'ca.crt')), requestClientCert: true,
    });
    expect(listenerSettings(c.http).tls).toBe(c.http.tls);
    const printed = formatMaskedConfig(c);
    expect(printed).toMatch(/key: <\d+ bytes>/);
    expect(printed).not.toContain('PRIVATE KEY');
  });

  it('without ca and requestClientCert is server TLS only', async () => {
    const c = await parseConfig(http('{ tls: { cert: server.crt, key: server.key } }'), dir);
    expect(c.http.tls).toMatchObject({ requestClientCert: false });
    expect(c.http.tls?.ca).toBeUndefined();
  });

  it.each([
    ['{ cert: server.crt }', 'http.tls.key: is required'],
    ['{ cert: server.crt, key: server.key, requestClientCert: true }', 'http.tls.ca: is required with requestClientCert: true'],
    ['{ cert: server.crt, key: server.key, ca: ca.crt }', 'http.tls.ca: only verifies client certificates: set requestClientCert: true'],
    ['{ cert: server.crt, key: server.key, servername: x }', 'http.tls.servername: unknown key'],
    ['{ cert: missing.crt, key: server.key }', `http.tls.cert: cannot read ${join(dir, 'missing.crt')}: ENOENT`],
    ['{ cert: server.crt, key: client.key }', 'http.tls: the certificate, key do not make a TLS server: '],
    ['{ cert: ca.crt, key: server.key, ca: ca.crt, requestClientCert: true }', 'http.tls: the certificate, key and ca do not make a TLS server: '],
    // OpenSSL takes these as a CA file without a word; every client's handshake would fail.
    ['{ cert: server.crt, key: server.key, ca: server.key, requestClientCert: true }', 'http.tls.ca: holds no PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['{ cert: server.crt, key: server.key, ca: empty.pem, requestClientCert: true }', 'http.tls.ca: holds no PEM certificate'],
    ['{ cert: server.crt, key: server.key, ca: broken.pem, requestClientCert: true }', 'http.tls.ca: certificate 2 of the file cannot be read: '],
  ])('%s is refused', async (tls, message) => {
    expect(await problem(http(`{ tls: ${tls} }`))).toContain(message);
  });

  it('a ca file the refusal names is never quoted', async () => {
    const refusal = await problem(http('{ tls: { cert: server.crt, key: server.key, ca: server.key, requestClientCert: true } }'));
    expect(refusal).not.toContain('PRIVATE KEY');
    expect(refusal).not.toContain(readFileSync(join(TLS_DIR, 'server.key'), 'utf8').split('\n')[1]);
  });
});
