/**
 * The admin API of a running daemon over real sockets: only admin tokens (a client's is 403, none
 * or an unknown one 401, and without an `admin` section there is no /admin at all), described in
 * /openapi.json, and a status that tells a bind the SMSC dropped within a second.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { recordingLog } from '../../support/http.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { ADMIN_CONFIG, ADMIN_TOKEN, call, status } from './admin.js';
import { TOKENS, routingDaemon, smsc, untilAllFinal } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ROUTES = [
  ['GET', '/admin/status'], ['POST', '/admin/upstreams/a/suspend'], ['POST', '/admin/upstreams/a/resume'],
  ['GET', '/admin/messages?destination=447700900001'], ['GET', '/admin/messages/some-id'],
] as const;

describe('admin API access', () => {
  it('refuses a client\'s token (403), no token and an unknown one (401, realm smppd-admin) on every route; takes an admin\'s', async () => {
    const a = await smsc(cleanups);
    const lines: string[] = [];
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG, log: recordingLog(lines) });
    for (const [method, path] of ROUTES) {
      const client = await call(r, method, path, { token: TOKENS.app });
      expect(client.status, `${method} ${path}`).toBe(403);
      expect(client.body).toMatchObject({ status: 403, error: 'Forbidden', errorCode: 'FORBIDDEN', requestUri: path.split('?')[0] });
      for (const token of [null, 'unknown-token-0123456789']) {
        const res = await call(r, method, path, { token });
        expect(res.status, `${method} ${path} ${token}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="smppd-admin"');
        expect(res.body).toMatchObject({ status: 401, errorCode: 'UNAUTHORIZED', requestUri: path.split('?')[0] });
      }
    }
    // The client's refused suspend changed nothing.
    expect((await status(r)).upstreams[0]).toMatchObject({ name: 'a', suspended: null });
    expect((await call(r, 'GET', '/admin/status')).status).toBe(200);
    expect((await call(r, 'GET', '/admin/messages/some-id')).body).toMatchObject({ status: 404, errorCode: 'MESSAGE_NOT_FOUND' });
    expect((await call(r, 'POST', '/admin/upstreams/nope/suspend')).body).toMatchObject({ status: 404, errorCode: 'UNKNOWN_UPSTREAM' });
    // An admin's token is no client's.
    const send = await call(r, 'POST', '/sms/sendSms', { body: { senderId: 'Ops', destinationNumber: '447700900001', message: 'x', messageType: 'TEXT' } });
    expect(send.status).toBe(401);
    expect(lines.join('\n')).not.toContain(ADMIN_TOKEN);
    expect(lines.join('\n')).not.toContain(TOKENS.app);
  }, 30_000);

  it('is off without an admin section: /admin is 404 as any unknown path, and /openapi.json does not describe it', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }] });
    const res = await call(r, 'GET', '/admin/status');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: 404, errorCode: 'NOT_FOUND', requestUri: '/admin/status' });
    const doc = (await call(r, 'GET', '/openapi.json', { token: null })).body as { paths: Record<string, unknown>; components: { securitySchemes: Record<string, unknown> } };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
    expect(doc.components.securitySchemes.adminBearer).toBeUndefined();
  }, 30_000);

  it('is in /openapi.json with the adminBearer scheme when on', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG });
    const doc = (await call(r, 'GET', '/openapi.json', { token: null })).body as {
      paths: Record<string, Record<string, { security: unknown }>>; components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin')).sort()).toEqual(
      ['/admin', '/admin/login', '/admin/logout', '/admin/messages', '/admin/messages/{id}', '/admin/status', '/admin/upstreams/{name}/resume',
        '/admin/upstreams/{name}/suspend']);
    expect(doc.paths['/admin/status']!.get!.security).toEqual([{ adminBearer: [] }]);
    expect(doc.components.securitySchemes.adminBearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.AdminStatus).toBeDefined();
  }, 30_000);
});

describe('GET /admin/status', () => {
  it('tells each upstream and bind, the queue and outbox per client, the store, version and uptime', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a, extra: 'binds: 2, window: 7, ratePerBind: 1000' }], extra: ADMIN_CONFIG });
    await r.untilAvailable('a');
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await r.send(`44770090${String(i).padStart(4, '0')}`, `m ${i}`));
    await untilAllFinal(r, ids);
    const s = await status(r);
    expect(s).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), store: { kind: 'sqlite', ok: true, error: null } });
    expect(s.store.latencyMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(s.startedAt)).toBeLessThanOrEqual(Date.now());
    expect(s.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(s.upstreams).toHaveLength(1);
    const u = s.upstreams[0]!;
    expect(u).toMatchObject({ name: 'a', available: true, suspended: null, queued: 0 });
    expect(u.binds.map((b) => b.id).sort()).toEqual(['a#0', 'a#1']);
    for (const b of u.binds) {
      expect(b).toMatchObject({ state: 'bound', detail: '', backoffSecondsLeft: null, window: { size: 7, inUse: 0, held: 0 }, throttle: { rate: 1000, episodes: 0, throttled: false } });
      expect(Date.parse(b.boundSince!)).toBeLessThanOrEqual(Date.now());
    }
    // 5 submit_sm in the last 10 s: 0.5 a second between the two binds; over the minute, 5/60.
    expect(u.binds.reduce((n, b) => n + b.submitRate.last10s, 0)).toBeCloseTo(0.5, 1);
    expect(u.binds.reduce((n, b) => n + b.submitRate.last1m, 0)).toBeCloseTo(5 / 60, 1);
    expect(s.clients).toEqual([{ name: 'app', queued: 0, outbox: { pending: 0, dead: 0 } }, { name: 'shop', queued: 0, outbox: { pending: 0, dead: 0 } }]);
  }, 30_000);

  it('tells a bind the SMSC dropped within a second: it leaves bound, with why, and the upstream is unavailable', async () => {
    const a = await smsc(cleanups);
    const r = await routingDaemon(cleanups, { upstreams: [{ name: 'a', smsc: a }], extra: ADMIN_CONFIG });
    await r.untilAvailable('a');
    expect((await status(r)).upstreams[0]!.binds[0]!.state).toBe('bound');
    await a.stop();
    const killedAt = Date.now();
    let seen: StatusSeen | undefined;
    while (Date.now() - killedAt <= 1_000) {
      const u = (await status(r)).upstreams[0]!;
      if (u.binds[0]!.state !== 'bound') {
        seen = { state: u.binds[0]!.state, detail: u.binds[0]!.detail, boundSince: u.binds[0]!.boundSince, available: u.available };
        break;
      }
    }
    expect(seen, 'the bind left bound within 1 s of the SMSC dropping it').toBeDefined();
    expect(['connecting', 'backoff']).toContain(seen!.state);
    expect(seen!.detail).not.toBe('');
    expect(seen!.boundSince).toBeNull();
    expect(seen!.available).toBe(false);
  }, 30_000);
});

interface StatusSeen { state: string; detail: string; boundSince: string | null; available: boolean }
