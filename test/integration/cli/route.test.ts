/**
 * `smppd route` as an operator runs it: a child process (`src/main.ts route …`) against a daemon
 * started from a config file with the built-in simulator. The route for 44 prefers `uk-main`,
 * whose SMSC does not exist (nothing listens on its port), then `global-backup`, the simulator;
 * shop has a route of its own for 49; no route takes other numbers. HTTPS to the daemon is tested
 * on a stand-in listener with the certificate of the config and with another one.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readyzAvailability } from '../../../src/cli/route.js';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { loadConfigFile, parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { freePort } from '../../support/free-port.js';

const cleanups: Array<() => Promise<void> | void> = [];
let dir: string;
let configFile: string;
/** The same routes, with http.listen on a port nobody listens on. */
let noDaemonConfig: string;
let daemon: RunningDaemon;

const configText = (httpPort: number, smscPort: number, deadPort: number): string => [
  'log: { level: silent }',
  `http: { listen: "127.0.0.1:${httpPort}" }`,
  'clients:',
  '  - { name: shop, token: route-test-shop-token-0123 }',
  '  - { name: bank, token: route-test-bank-token-0123 }',
  'store: { path: smppd.db }',
  `simulator: { enabled: true, port: ${smscPort}, systemId: demo, password: demopw }`,
  'upstreams:',
  // Down from the start; its queued parts would move after failoverAfterSeconds, which this test does not wait for.
  `  - { name: uk-main, host: 127.0.0.1, port: ${deadPort}, systemId: demo, password: demopw, binds: 1, failoverAfterSeconds: 3600 }`,
  `  - { name: global-backup, host: 127.0.0.1, port: ${smscPort}, systemId: demo, password: demopw, binds: 1 }`,
  'routes:',
  '  - { prefix: "44", upstreams: [uk-main, global-backup] }',
  '  - { prefix: "49", upstreams: [global-backup], clients: [shop] }',
  '',
].join('\n');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smppd-route-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const [httpPort, smscPort, deadPort, idlePort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  configFile = join(dir, 'smppd.yaml');
  writeFileSync(configFile, configText(httpPort, smscPort, deadPort));
  noDaemonConfig = join(dir, 'no-daemon.yaml');
  writeFileSync(noDaemonConfig, configText(idlePort, smscPort, deadPort));
  daemon = await startDaemon(await loadConfigFile(configFile), { clock: new SystemClock(), log: silentLog });
  cleanups.push(() => daemon.stop());
  // The simulator's bind up: global-backup available, uk-main not.
  for (let i = 0; ; i++) {
    const body = (await (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).json()) as { upstreams: Array<{ name: string; available: boolean }> };
    if (body.upstreams.some((u) => u.name === 'global-backup' && u.available)) break;
    if (i > 100) throw new Error('global-backup never bound');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 30_000);

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Run { code: number; out: string[]; err: string[] }

/** `smppd route …` in a child process, from the sources. */
function route(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'route', ...args], { env: { PATH: process.env['PATH'] } }, (error, stdout, stderr) => {
      const code = error ? error.code : 0;
      if (typeof code !== 'number') {
        reject(error ?? new Error('no exit code'));
        return;
      }
      const lines = (s: string): string[] => s.split('\n').filter((l) => l !== '');
      resolve({ code, out: lines(stdout), err: lines(stderr) });
    });
  });
}

describe('smppd route against a running daemon', () => {
  it('shows the unreachable upstream unavailable and the send going to the backup', async () => {
    const r = await route(['447700900123', '--config', configFile]);
    expect(r).toEqual({
      code: 0,
      out: [
        'route 44 (prefix 44; clients: any; strategy failover)',
        'upstreams: uk-main (unavailable), global-backup (available)',
        'sends go to: global-backup',
      ],
      err: [],
    });
  });

  it('--offline decides from the config alone: the first upstream, taken as available', async () => {
    const r = await route(['447700900123', '--config', configFile, '--offline']);
    expect(r.code).toBe(0);
    expect(r.out.slice(1)).toEqual(['upstreams: uk-main (assumed available), global-backup (assumed available)', 'sends go to: uk-main']);
  });

  it('--client: the client\'s own route, as JSON', async () => {
    const r = await route(['4915112345678', '--config', configFile, '--client', 'shop', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out[0]!)).toMatchObject({
      route: { name: '49@shop', prefix: '49', clients: ['shop'] }, upstream: 'global-backup', sendsTo: ['global-backup'], availability: 'daemon',
    });
  });

  it('no route for the number: exit 1; an invalid number: exit 2', async () => {
    const [none, other, bad] = await Promise.all([
      route(['12025550123', '--config', configFile]),
      route(['4915112345678', '--config', configFile, '--client', 'bank']),
      route(['44-7700', '--config', configFile]),
    ]);
    expect(none).toMatchObject({ code: 1, out: [] });
    expect(none.err.join('\n')).toMatch(/no route takes 12025550123 .*400 NO_ROUTE/);
    expect(other.code).toBe(1);
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toMatch(/NUMBER must be digits only/);
  });

  it('with no daemon on http.listen: said on stderr, then the config alone decides', async () => {
    const r = await route(['447700900123', '--config', noDaemonConfig]);
    expect(r.code).toBe(0);
    expect(r.err).toEqual([expect.stringMatching(/^smppd route: cannot ask the daemon \(http:\/\/127\.0\.0\.1:\d+\/readyz: ECONNREFUSED\); deciding from the config alone/)]);
    expect(r.out.at(-1)).toBe('sends go to: uk-main');
  });
});

describe('asking a daemon with http.tls', () => {
  const fixture = (name: string): Buffer => readFileSync(join('test/fixtures/tls', name));

  /** A stand-in for the daemon's HTTPS listener, with `cert`; the config names server.crt. */
  async function askOverHttps(cert: string, key: string): Promise<ReadonlyMap<string, boolean>> {
    const server = createHttpsServer({ cert: fixture(cert), key: fixture(key) }, (_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'not ready', reasons: ['route 44: no upstream available'], upstreams: [{ name: 'uk-main', available: false, bound: 0, binds: 1 }] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const config = await parseConfig([
        `http: { listen: "0.0.0.0:${port}", tls: { cert: ${join(process.cwd(), 'test/fixtures/tls/server.crt')}, key: ${join(process.cwd(), 'test/fixtures/tls/server.key')} } }`,
        'clients: [{ name: shop, token: route-test-shop-token-0123 }]',
        'upstreams: [{ name: uk-main, host: 127.0.0.1, systemId: demo, password: demopw }]',
        'store: { path: smppd.db }',
        '',
      ].join('\n'), dir);
      return await readyzAvailability(config);
    } finally {
      server.close();
    }
  }

  it('reads a 503 over HTTPS from the listener presenting http.tls.cert', async () => {
    expect(await askOverHttps('server.crt', 'server.key')).toEqual(new Map([['uk-main', false]]));
  });

  it('does not trust a listener presenting another certificate', async () => {
    await expect(askOverHttps('client.crt', 'client.key')).rejects.toThrow(/presented a certificate other than http\.tls\.cert/);
  });
});
