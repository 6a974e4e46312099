/**
 * `smppd status`, `smppd upstream` and `smppd messages` as an operator runs them: child processes
 * (`src/main.ts …`) against a running daemon with the simulator and an admin section. What they
 * print is checked against what the daemon does, and each exit code the usage texts document.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cleanups } from '../../support/daemon-child.js';
import { freePort } from '../../support/free-port.js';
import { ADMIN_TOKEN, status } from '../routing/admin.js';
import { TOKENS, routingDaemon, smsc, untilAllFinal, type RoutingDaemon } from '../routing/rig.js';

/** A few child processes each, on a loaded CI machine. */
const SLOW = 60_000;
const cleanups: Cleanups = [];
let r: RoutingDaemon;
let url: string;
/** A config file naming the daemon's address and its admin token, as /etc/smppd/smppd.yaml would. */
let configFile: string;
let delivered: string;

beforeAll(async () => {
  const [a, b] = [await smsc(cleanups), await smsc(cleanups)];
  r = await routingDaemon(cleanups, {
    upstreams: [{ name: 'a', smsc: a, extra: 'binds: 2' }, { name: 'b', smsc: b }],
    routes: ['{ prefix: "44", upstreams: [a, b] }', '{ prefix: "", upstreams: [b] }'],
    extra: [`admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN} }, { name: night, token: night-admin-token-0123456789 }] }`],
  });
  await r.untilAvailable('a');
  await r.untilAvailable('b');
  url = `http://127.0.0.1:${r.d.http.port}`;
  configFile = join(r.dir, 'operator.yaml');
  writeFileSync(configFile, [
    `http: { listen: "127.0.0.1:${r.d.http.port}" }`,
    'upstreams: [{ name: a, host: 127.0.0.1, systemId: x, password: y }]',
    `clients: [{ name: app, token: ${TOKENS.app} }]`,
    `admin: { tokens: [{ name: ops, token: ${ADMIN_TOKEN} }] }`,
    'store: { path: smppd.db }',
    '',
  ].join('\n'));
  delivered = await r.send('447700900123', 'hello from the CLI test');
  expect(await untilAllFinal(r, [delivered])).toEqual(['DELIVERED']);
}, 30_000);

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Run { code: number; out: string; err: string }

/** `smppd …` in a child process, from the sources; `env` beside PATH only. */
function smppd(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', ...args], { env: { PATH: process.env['PATH'], ...env } }, (error, stdout, stderr) => {
      const code = error ? error.code : 0;
      if (typeof code !== 'number') {
        reject(error ?? new Error('no exit code'));
        return;
      }
      resolve({ code, out: stdout, err: stderr });
    });
  });
}

const as = (token = ADMIN_TOKEN): string[] => ['--url', url, '--token', token];
/** The whitespace-split cells of the line of `out` that starts with `first`. */
const row = (out: string, first: string): string[] | undefined => out.split('\n').map((l) => l.trim().split(/\s+/)).find((c) => c[0] === first);

describe('smppd status against a daemon', () => {
  it('prints every bind bound, each upstream and the store (exit 0)', async () => {
    const res = await smppd(['status', ...as()]);
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(res.out).toMatch(/^smppd 0\.1\.0 on \S+, up \d/);
    expect(res.out).toContain('store sqlite ok');
    for (const id of ['a#0', 'a#1', 'b#0']) expect(row(res.out, id)?.slice(0, 2)).toEqual([id, 'bound']);
    expect(row(res.out, 'a')).toEqual(['a', 'available', '0', '2/2']);
    expect(row(res.out, 'app')?.[0]).toBe('app');
  }, SLOW);

  it('prints the daemon\'s JSON with --json, reading the URL and token from --config', async () => {
    const res = await smppd(['status', '--json', '--config', configFile]);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.out) as { upstreams: Array<{ name: string; binds: Array<{ id: string; state: string }> }> };
    expect(body.upstreams.map((u) => [u.name, u.binds.map((b) => b.state)])).toEqual([['a', ['bound', 'bound']], ['b', ['bound']]]);
  }, SLOW);
});

describe('smppd upstream against a daemon', () => {
  it('suspends and resumes: what status shows follows (exit 0), as the admin whose token it used', async () => {
    const suspended = await smppd(['upstream', 'suspend', 'b', '--reason', 'SMSC maintenance tonight', '--url', url], { SMPPD_ADMIN_TOKEN: 'night-admin-token-0123456789' });
    expect(suspended.code).toBe(0);
    expect(suspended.out).toMatch(/^b suspended since \S+ by night: SMSC maintenance tonight\n$/);
    expect((await status(r)).upstreams.find((u) => u.name === 'b')?.suspended).toMatchObject({ by: 'night', reason: 'SMSC maintenance tonight' });
    const shown = await smppd(['status', ...as()]);
    expect(row(shown.out, 'b')?.[1]).toBe('suspended');
    expect(shown.out).toMatch(/^b suspended since \S+ \(\d+s\) by night: SMSC maintenance tonight$/m);

    const resumed = await smppd(['upstream', 'resume', 'b', ...as()]);
    expect(resumed).toMatchObject({ code: 0, out: 'b resumed: sending\n' });
    expect((await status(r)).upstreams.find((u) => u.name === 'b')?.suspended).toBeNull();
    expect(row((await smppd(['status', ...as()])).out, 'b')?.[1]).toBe('available');
  }, SLOW);

  it('exits 1 for an upstream the daemon does not have', async () => {
    const res = await smppd(['upstream', 'suspend', 'nope', ...as()]);
    expect(res.code).toBe(1);
    expect(res.err).toContain('HTTP 404 UNKNOWN_UPSTREAM');
  }, SLOW);
});

describe('smppd messages against a daemon', () => {
  it('finds a number\'s messages and shows one\'s story (exit 0)', async () => {
    const found = await smppd(['messages', 'find', '--to', '447700900123', '--since', '1h', ...as()]);
    expect(found.code).toBe(0);
    const line = row(found.out, found.out.split('\n')[1]!.trim().split(/\s+/)[0]!);
    expect(line?.slice(1, 7)).toEqual([delivered, 'app', 'Routing', '447700900123', 'a', 'DELIVERED']);
    const none = await smppd(['messages', 'find', '--to', '447700900999', ...as()]);
    expect(none).toMatchObject({ code: 0, out: 'no messages\n' });

    const shown = await smppd(['messages', 'show', delivered, ...as()]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain(`message ${delivered}\n`);
    expect(shown.out).toContain('  status    DELIVERED\n');
    expect(shown.out).toContain('  text      "hello from the CLI test"\n');
    expect(shown.out).toMatch(/^\S+ +all +SUBMITTED +accept/m);
    expect(shown.out).toMatch(/^\S+ +1 +DELIVERED +receipt/m);
  }, SLOW);

  it('exits 1 for an unknown message id', async () => {
    const res = await smppd(['messages', 'show', 'no-such-message', ...as()]);
    expect(res.code).toBe(1);
    expect(res.err).toContain('MESSAGE_NOT_FOUND');
  }, SLOW);
});

describe('the admin commands\' exit codes', () => {
  it('4 for an unknown token and for a client\'s, which is never printed', async () => {
    const [unknown, client] = await Promise.all([smppd(['status', ...as('unknown-token-0123456789')]), smppd(['status', ...as(TOKENS.app)])]);
    expect(unknown.code).toBe(4);
    expect(unknown.err).toContain('HTTP 401 UNAUTHORIZED');
    expect(client.code).toBe(4);
    expect(client.err).toContain('HTTP 403 FORBIDDEN');
    expect(`${unknown.out}${unknown.err}${client.out}${client.err}`).not.toMatch(/unknown-token-0123456789|routing-app-token/);
  }, SLOW);

  it('3 when the daemon cannot be reached', async () => {
    const res = await smppd(['status', '--url', `http://127.0.0.1:${await freePort()}`, '--token', ADMIN_TOKEN]);
    expect(res.code).toBe(3);
    expect(res.err).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  }, SLOW);

  it('2 for a usage error, 78 for a config that does not load', async () => {
    const [usage, missing] = await Promise.all([
      smppd(['upstream', 'suspend', ...as()]),
      smppd(['status', '--config', join(r.dir, 'absent.yaml')]),
    ]);
    expect(usage.code).toBe(2);
    expect(usage.err).toContain('NAME is required');
    expect(missing.code).toBe(78);
  }, SLOW);
});
