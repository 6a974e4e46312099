/**
 * `smppd status`, `smppd upstream` and `smppd messages` against a stand-in for the daemon's admin
 * API (a loopback HTTP server answering as the contract says): what they ask, what they print and
 * their exit codes. Against the real daemon: test/integration/cli/admin.test.ts.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_EXIT, type AdminIo } from '../../../src/cli/admin-client.js';
import { runMessages } from '../../../src/cli/messages.js';
import { runStatus } from '../../../src/cli/status.js';
import { runUpstream } from '../../../src/cli/upstream.js';
import { ManualClock } from '../../../src/core/clock.js';
import { sampleMessageList, sampleMessageStory, sampleStatus } from '../../support/admin-samples.js';
import { freePort } from '../../support/free-port.js';

const TOKEN = 'admin-token-0123456789';
const CLIENT_TOKEN = 'client-token-0123456789';

interface Seen { method: string; url: string; authorization: string | undefined; body: string }
const seen: Seen[] = [];
let server: Server;
let url: string;
const dir = mkdtempSync(join(tmpdir(), 'smppd-admin-cli-'));

const fiveField = (status: number, error: string, errorCode: string, message: string, requestUri: string): string =>
  JSON.stringify({ status, error, message, errorCode, requestUri });

/** The contract's answers; the 401 message echoes the token, which the command must not print. */
function answer(req: IncomingMessage, body: string): { status: number; body: string } {
  const path = (req.url ?? '').split('?')[0]!;
  const auth = req.headers.authorization;
  if (auth === `Bearer ${CLIENT_TOKEN}`) return { status: 403, body: fiveField(403, 'Forbidden', 'FORBIDDEN', 'a client token cannot use /admin', path) };
  if (auth !== `Bearer ${TOKEN}`) return { status: 401, body: fiveField(401, 'Unauthorized', 'UNAUTHORIZED', `unknown token ${auth ?? ''}`, path) };
  if (req.method === 'GET' && path === '/admin/status') return { status: 200, body: JSON.stringify(sampleStatus()) };
  const m = /^\/admin\/upstreams\/([^/]+)\/(suspend|resume)$/.exec(path);
  if (req.method === 'POST' && m) {
    if (m[1] !== 'demo') return { status: 404, body: fiveField(404, 'Not Found', 'UNKNOWN_UPSTREAM', `no upstream ${decodeURIComponent(m[1]!)}`, path) };
    const reason = body === '' ? null : (JSON.parse(body) as { reason?: string }).reason ?? null;
    const suspended = m[2] === 'suspend' ? { since: '2026-11-27T02:00:00.000Z', by: 'ops', reason } : null;
    return { status: 200, body: JSON.stringify({ upstream: 'demo', suspended }) };
  }
  if (req.method === 'GET' && path === '/admin/messages') return { status: 200, body: JSON.stringify(sampleMessageList()) };
  if (req.method === 'GET' && path === `/admin/messages/${sampleMessageStory().message.id}`) return { status: 200, body: JSON.stringify(sampleMessageStory()) };
  if (req.method === 'GET' && path.startsWith('/admin/messages/')) return { status: 404, body: fiveField(404, 'Not Found', 'MESSAGE_NOT_FOUND', 'no message', path) };
  return { status: 404, body: fiveField(404, 'Not Found', 'NOT_FOUND', 'no route', path) };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
      const a = answer(req, body);
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => { seen.length = 0; });

interface Run { code: number; out: string; err: string }

async function run(command: (argv: string[], io: AdminIo) => Promise<number>, argv: string[], env: Record<string, string> = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const clock = new ManualClock(0, Date.parse('2026-11-27T12:00:00.000Z'));
  const code = await command(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env, clock });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const target = (): string[] => ['--url', url, '--token', TOKEN];

describe('smppd status', () => {
  it('asks GET /admin/status with the bearer token and prints the tables', async () => {
    const r = await run(runStatus, target());
    expect(r.code).toBe(ADMIN_EXIT.ok);
    expect(seen).toEqual([{ method: 'GET', url: '/admin/status', authorization: `Bearer ${TOKEN}`, body: '' }]);
    expect(r.out).toMatch(/^demo#0 +bound +1h03m/m);
    expect(r.out).toMatch(/^backup +suspended/m);
  });

  it('prints the JSON with --json, and takes the token from SMPPD_ADMIN_TOKEN', async () => {
    const r = await run(runStatus, ['--url', url, '--json'], { SMPPD_ADMIN_TOKEN: TOKEN });
    expect(r.code).toBe(ADMIN_EXIT.ok);
    expect(JSON.parse(r.out)).toEqual(sampleStatus());
  });

  it('exits 4 on an unknown token and on a client\'s, never printing the token', async () => {
    const unknown = await run(runStatus, ['--url', url, '--token', 'not-an-admin-token-42']);
    expect(unknown.code).toBe(ADMIN_EXIT.unauthorized);
    expect(unknown.err).toContain('HTTP 401 UNAUTHORIZED');
    expect(unknown.err).not.toContain('not-an-admin-token-42');
    const client = await run(runStatus, ['--url', url, '--token', CLIENT_TOKEN]);
    expect(client.code).toBe(ADMIN_EXIT.unauthorized);
    expect(client.err).toContain('HTTP 403 FORBIDDEN');
  });

  it('exits 3 when nothing answers', async () => {
    const r = await run(runStatus, ['--url', `http://127.0.0.1:${await freePort()}`, '--token', TOKEN]);
    expect(r.code).toBe(ADMIN_EXIT.unreachable);
    expect(r.err).toContain('ECONNREFUSED');
  });

  it('exits 2 on a usage error, before asking anything', async () => {
    expect((await run(runStatus, ['--bogus'])).code).toBe(ADMIN_EXIT.usage);
    expect((await run(runStatus, ['--url', 'ftp://x', '--token', TOKEN])).code).toBe(ADMIN_EXIT.usage);
    expect(seen).toEqual([]);
  });

  it('exits 78 when the config does not load or has no admin token', async () => {
    const missing = await run(runStatus, ['--config', join(dir, 'absent.yaml')]);
    expect(missing.code).toBe(ADMIN_EXIT.config);
    const file = join(dir, 'no-admin.yaml');
    writeFileSync(file, ['upstreams:', '  - { name: demo, host: 127.0.0.1, systemId: a, password: b }', 'clients:', `  - { name: app, token: ${CLIENT_TOKEN} }`, 'store: { path: x.db }', ''].join('\n'));
    const noAdmin = await run(runStatus, ['--config', file]);
    expect(noAdmin.code).toBe(ADMIN_EXIT.config);
    expect(noAdmin.err).toContain('has no admin.tokens');
  });

  it('takes the URL from the config\'s http.listen when only the token is given', async () => {
    const file = join(dir, 'listen.yaml');
    writeFileSync(file, [`http: { listen: "0.0.0.0:${new URL(url).port}" }`, 'upstreams:', '  - { name: demo, host: 127.0.0.1, systemId: a, password: b }',
      'clients:', `  - { name: app, token: ${CLIENT_TOKEN} }`, 'store: { path: x.db }', ''].join('\n'));
    const r = await run(runStatus, ['--config', file, '--token', TOKEN]);
    expect(r.code).toBe(ADMIN_EXIT.ok);
    expect(seen.map((s) => s.url)).toEqual(['/admin/status']);
  });
});

describe('smppd upstream', () => {
  it('suspends with a reason and says who suspended it', async () => {
    const r = await run(runUpstream, ['suspend', 'demo', '--reason', 'SMSC maintenance', ...target()]);
    expect(r.code).toBe(ADMIN_EXIT.ok);
    expect(seen).toEqual([{ method: 'POST', url: '/admin/upstreams/demo/suspend', authorization: `Bearer ${TOKEN}`, body: '{"reason":"SMSC maintenance"}' }]);
    expect(r.out).toBe('demo suspended since 2026-11-27T02:00:00.000Z by ops: SMSC maintenance');
  });

  it('resumes', async () => {
    const r = await run(runUpstream, ['resume', 'demo', ...target()]);
    expect(r.code).toBe(ADMIN_EXIT.ok);
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([['POST', '/admin/upstreams/demo/resume', '']]);
    expect(r.out).toBe('demo resumed: sending');
  });

  it('exits 1 for an upstream the daemon does not have', async () => {
    const r = await run(runUpstream, ['suspend', 'nope/x', ...target()]);
    expect(r.code).toBe(ADMIN_EXIT.refused);
    expect(seen[0]!.url).toBe('/admin/upstreams/nope%2Fx/suspend');
    expect(r.err).toContain('HTTP 404 UNKNOWN_UPSTREAM');
  });

  it.each([
    [['pause', 'demo']], [['suspend']], [['suspend', 'a', 'b']], [['resume', 'demo', '--reason', 'x']], [['suspend', 'demo', '--reason', 'x'.repeat(201)]],
  ])('exits 2 on usage %j', async (argv) => {
    expect((await run(runUpstream, [...argv, ...target()])).code).toBe(ADMIN_EXIT.usage);
    expect(seen).toEqual([]);
  });
});

describe('smppd messages', () => {
  it('finds by destination with the filters as query parameters, ages made times', async () => {
    const r = await run(runMessages, ['find', '--to', '+447700900123', '--since', '2h', '--until', '2026-11-27T11:30:00Z', '--status', 'failed', '--limit', '10', '--client', 'app', ...target()]);
    expect(r.code).toBe(ADMIN_EXIT.ok);
    const asked = new URL(seen[0]!.url, url);
    expect(asked.pathname).toBe('/admin/messages');
    expect(Object.fromEntries(asked.searchParams)).toEqual({
      destination: '+447700900123', since: '2026-11-27T10:00:00.000Z', until: '2026-11-27T11:30:00.000Z', status: 'FAILED', limit: '10', client: 'app',
    });
    expect(r.out).toContain('9f1c2d3e-0000-4000-8000-000000000002');
    expect(r.out).toContain('--after cursor-abc');
  });

  it('shows one message, and exits 1 for an unknown id', async () => {
    const shown = await run(runMessages, ['show', sampleMessageStory().message.id, ...target()]);
    expect(shown.code).toBe(ADMIN_EXIT.ok);
    expect(shown.out).toContain('  status    DELIVERED');
    const unknown = await run(runMessages, ['show', 'no-such-id', ...target()]);
    expect(unknown.code).toBe(ADMIN_EXIT.refused);
    expect(unknown.err).toContain('MESSAGE_NOT_FOUND');
  });

  it.each([
    [['find']], [['find', '--to', '44-77']], [['find', '--to', '44', '--since', 'yesterday']], [['find', '--to', '44', '--status', 'LOST']],
    [['find', '--to', '44', '--limit', '501']], [['show']], [['show', 'a', '--to', '44']], [['list']],
  ])('exits 2 on usage %j', async (argv) => {
    expect((await run(runMessages, [...argv, ...target()])).code).toBe(ADMIN_EXIT.usage);
    expect(seen).toEqual([]);
  });
});
