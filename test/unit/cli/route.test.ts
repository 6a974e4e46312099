/**
 * `smppd route`'s output and exit codes, on config files of its own and a daemon's answer given
 * by the test (the real GET /readyz is in test/integration/cli/route.test.ts).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, ROUTE_EXIT, runRoute, type AskDaemon } from '../../../src/cli/route.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-route-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const UPSTREAMS = [
  'upstreams:',
  '  - { name: uk-main, host: uk.example.net, systemId: uk, password: ukpw }',
  '  - { name: global-backup, host: backup.example.net, systemId: gb, password: gbpw }',
  '  - { name: eu, host: eu.example.net, systemId: eu, password: eupw }',
];
const CLIENTS = [
  'clients:',
  '  - { name: shop, token: shop-token-0123456789 }',
  '  - { name: bank, token: bank-token-0123456789 }',
];

function configFile(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, [...lines, 'store: { path: smppd.db }', ''].join('\n'));
  return path;
}

/** Two providers: uk-main for 44 with a backup, shop's own route for 49 and 33, a weighted catch-all. */
const routed = configFile('routed.yaml', [...UPSTREAMS, ...CLIENTS,
  'routes:',
  '  - { prefix: "44", upstreams: [uk-main, global-backup] }',
  '  - { prefix: ["49", "33"], upstreams: [eu, global-backup], clients: [shop] }',
  '  - { prefix: "1", upstreams: [global-backup, eu], strategy: weighted, weights: [3, 1] }',
]);
/** Without a route for every number. */
const partial = configFile('partial.yaml', [...UPSTREAMS, ...CLIENTS, 'routes:', '  - { prefix: "44", upstreams: [uk-main] }']);
/** No routes: every upstream in file order. */
const unrouted = configFile('unrouted.yaml', [...UPSTREAMS, ...CLIENTS]);

interface Run { code: number; out: string[]; err: string[]; asked: number }

/** runRoute with the daemon's answer `available` (null: it cannot be reached). */
async function route(argv: string[], available: Record<string, boolean> | null = { 'uk-main': true, 'global-backup': true, eu: true }): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  let asked = 0;
  const askDaemon: AskDaemon = () => {
    asked++;
    return available === null ? Promise.reject(new Error('http://127.0.0.1:8080/readyz: ECONNREFUSED')) : Promise.resolve(new Map(Object.entries(available)));
  };
  const code = await runRoute(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: {}, askDaemon });
  return { code, out, err, asked };
}

describe('smppd route', () => {
  it('prints the route, its upstreams and where sends go, and exits 0', async () => {
    const r = await route(['447700900123', '--config', routed]);
    expect(r).toMatchObject({ code: ROUTE_EXIT.routed, err: [], asked: 1 });
    expect(r.out).toEqual([
      'route 44 (prefix 44; clients: any; strategy failover)',
      'upstreams: uk-main (available), global-backup (available)',
      'sends go to: uk-main',
    ]);
  });

  it('a failover route whose first upstream the daemon reports unavailable sends to the next', async () => {
    const r = await route(['447700900123', '--config', routed], { 'uk-main': false, 'global-backup': true, eu: true });
    expect(r.code).toBe(0);
    expect(r.out.slice(1)).toEqual(['upstreams: uk-main (unavailable), global-backup (available)', 'sends go to: global-backup']);
  });

  it('no upstream of the route available: sends wait in the first one\'s queue', async () => {
    const r = await route(['447700900123', '--config', routed], { 'uk-main': false, 'global-backup': false, eu: true });
    expect(r.code).toBe(0);
    expect(r.out[2]).toBe('sends go to: uk-main (none available: sends wait in its queue until an upstream of the route returns)');
  });

  it('a client\'s own route applies to that client only', async () => {
    const shop = await route(['4915112345678', '--config', routed, '--client', 'shop']);
    expect(shop.code).toBe(0);
    expect(shop.out[0]).toBe('route 49,33@shop (prefix 49; clients: shop; strategy failover)');
    expect(shop.out[2]).toBe('sends go to: eu');
    const bank = await route(['4915112345678', '--config', routed, '--client', 'bank']);
    expect(bank.code).toBe(ROUTE_EXIT.noRoute);
  });

  it('a weighted route names the available upstreams with their weights', async () => {
    const r = await route(['12025550123', '--config', routed], { 'uk-main': true, 'global-backup': true, eu: true });
    expect(r.out).toEqual([
      'route 1 (prefix 1; clients: any; strategy weighted)',
      'upstreams: global-backup (available, weight 3), eu (available, weight 1)',
      'sends go to: global-backup (weight 3), eu (weight 1)',
    ]);
    const down = await route(['12025550123', '--config', routed], { 'uk-main': true, 'global-backup': false, eu: true });
    expect(down.out[2]).toBe('sends go to: eu (weight 1)');
  });

  it('no route takes the number: the reason on stderr, nothing on stdout, exit 1', async () => {
    const r = await route(['12025550123', '--config', partial]);
    expect(r.code).toBe(ROUTE_EXIT.noRoute);
    expect(ROUTE_EXIT.noRoute).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual(['smppd route: no route takes 12025550123 for a client without routes of its own: a send would be refused (400 NO_ROUTE)']);
  });

  it('--json: one object; with no route, route null and exit 1', async () => {
    const r = await route(['447700900123', '--config', routed, '--json'], { 'uk-main': false, 'global-backup': true, eu: true });
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    expect(JSON.parse(r.out[0]!)).toEqual({
      number: '447700900123', client: null,
      route: { name: '44', prefix: '44', prefixes: ['44'], clients: null, strategy: 'failover' },
      upstreams: [{ name: 'uk-main', available: false, weight: 1 }, { name: 'global-backup', available: true, weight: 1 }],
      upstream: 'global-backup', sendsTo: ['global-backup'], availability: 'daemon',
    });
    const none = await route(['12025550123', '--config', partial, '--json', '--client', 'shop']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.out[0]!)).toEqual({ number: '12025550123', client: 'shop', route: null, availability: 'daemon' });
  });

  it('--offline: the daemon is not asked and every upstream is taken as available', async () => {
    const r = await route(['447700900123', '--config', routed, '--offline'], { 'uk-main': false, 'global-backup': true, eu: true });
    expect(r.asked).toBe(0);
    expect(r.err).toEqual([]);
    expect(r.out.slice(1)).toEqual(['upstreams: uk-main (assumed available), global-backup (assumed available)', 'sends go to: uk-main']);
  });

  it('a daemon that cannot be reached: said on stderr, then the config alone decides', async () => {
    const r = await route(['447700900123', '--config', routed, '--json'], null);
    expect(r.code).toBe(0);
    expect(r.err).toEqual(['smppd route: cannot ask the daemon (http://127.0.0.1:8080/readyz: ECONNREFUSED); deciding from the config alone, every upstream taken as available']);
    expect(JSON.parse(r.out[0]!)).toMatchObject({ upstream: 'uk-main', availability: 'config', daemonError: 'http://127.0.0.1:8080/readyz: ECONNREFUSED' });
  });

  it('an upstream the daemon does not know is taken as unavailable, with a note', async () => {
    const r = await route(['447700900123', '--config', routed], { 'global-backup': true });
    expect(r.out[2]).toBe('sends go to: global-backup');
    expect(r.err.join('\n')).toMatch(/the daemon has no upstream uk-main: is it running with another configuration/);
  });

  it('without routes in the config every upstream, in file order, is the one route', async () => {
    const r = await route(['447700900123', '--config', unrouted], { 'uk-main': false, 'global-backup': false, eu: true });
    expect(r.out).toEqual([
      'route default (prefix "" (any number); clients: any; strategy failover); the config has no routes: every upstream, in file order',
      'upstreams: uk-main (unavailable), global-backup (unavailable), eu (available)',
      'sends go to: eu',
    ]);
  });

  // On a host where smppd is installed the file is there, and the command would read it.
  it.skipIf(existsSync(DEFAULT_CONFIG))('reads /etc/smppd/smppd.yaml without --config (the systemd unit\'s), and says so when it is not there', async () => {
    const r = await route(['447700900123']);
    expect(r.code).toBe(ROUTE_EXIT.config);
    expect(r.err.join('\n')).toContain(DEFAULT_CONFIG);
  });

  it.each([
    [['44770090012x', '--config', routed], /NUMBER must be digits only/],
    [['+447700900123', '--config', routed], /NUMBER must not start with '\+'/],
    [['4477', '--config', routed], /NUMBER must be at least 7 digits/],
    [['--config', routed], /NUMBER is required/],
    [['447700900123', '447700900124', '--config', routed], /one NUMBER only, got 2/],
    [['447700900123', '--config', routed, '--bogus'], /Unknown option '--bogus'/],
  ])('usage error %j: exit 2 with the usage', async (argv, message) => {
    const r = await route(argv);
    expect(r.code).toBe(ROUTE_EXIT.usage);
    expect(r.out).toEqual([]);
    expect(r.err.join('\n')).toMatch(message);
    expect(r.err.join('\n')).toContain('Usage: smppd route NUMBER');
    expect(r.asked).toBe(0);
  });

  it('an unknown client: exit 2 naming the clients there are', async () => {
    const r = await route(['447700900123', '--config', routed, '--client', 'shopp']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([`smppd route: ${routed} has no client 'shopp' (clients: shop, bank)`]);
  });

  it('a config that does not load: exit 78 with the key that is wrong', async () => {
    const bad = configFile('bad.yaml', [...UPSTREAMS, ...CLIENTS, 'routes:', '  - { prefix: "4x", upstreams: [uk-main] }']);
    const r = await route(['447700900123', '--config', bad]);
    expect(r.code).toBe(ROUTE_EXIT.config);
    expect(r.err.join('\n')).toMatch(/routes\[0\]\.prefix/);
    expect((await route(['447700900123', '--config', join(dir, 'absent.yaml')])).code).toBe(78);
  });

  it('--help documents the exit codes and exits 0', async () => {
    const r = await route(['--help']);
    expect(r.code).toBe(0);
    expect(r.out.join('\n')).toMatch(/Exit code: 0 a route takes NUMBER; 1 no route takes it .*\n2 usage error .* 78 the\nconfiguration does not load/s);
  });
});
