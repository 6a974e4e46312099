/**
 * AdminAuth on a fastify instance: bearer admin tokens, a client's token refused 403, none or an
 * unknown one 401 with the admin realm's challenge, a session lookup (the page's cookie) with its
 * CSRF proof on changes, and routes that let a caller who is not signed in through.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminAuth, type AdminIdentity } from '../../../../src/ingress/http/admin/admin-auth.js';
import { errorHandler } from '../../../../src/ingress/http/error-replies.js';
import { silentLog } from '../../../../src/core/log.js';

const ADMIN = 'admin-token-0123456789';
const CLIENT = 'client-token-0123456789';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(withSession = false): Promise<{ app: FastifyInstance; auth: AdminAuth }> {
  const auth = new AdminAuth([{ name: 'ops', token: ADMIN }], (t) => t === CLIENT);
  if (withSession) auth.addSessionLookup((request) => (request.headers.cookie === 'smppd_admin=s1' ? { name: 'web', via: 'session' } : undefined));
  const a = Fastify({ logger: false });
  a.setErrorHandler(errorHandler(silentLog));
  await a.register(async (scope) => {
    auth.guard(scope);
    scope.get('/status', async (request) => ({ admin: auth.requireAdmin(request) }));
    scope.post('/upstreams/x/suspend', async (request) => ({ admin: auth.requireAdmin(request) }));
    scope.get('/', { config: { adminAuth: 'optional' } }, async (request) => ({ admin: auth.adminOf(request) ?? null }));
  }, { prefix: '/admin' });
  app = a;
  return { app: a, auth };
}

describe('AdminAuth', () => {
  it('takes an admin\'s bearer token, and names the admin', async () => {
    const { app } = await serve();
    const res = await app.inject({ url: '/admin/status', headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ admin: { name: 'ops', via: 'bearer' } satisfies AdminIdentity });
  });

  it('refuses no token, an unknown one or another scheme with 401, the five-field body and the admin realm', async () => {
    const { app } = await serve();
    for (const authorization of [undefined, 'Bearer not-a-token-0123456789', `Basic ${ADMIN}`]) {
      const res = await app.inject({ url: '/admin/status', headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="smppd-admin"');
      expect(res.json()).toMatchObject({ status: 401, error: 'Unauthorized', errorCode: 'UNAUTHORIZED', requestUri: '/admin/status' });
      expect(res.body).not.toContain(ADMIN);
    }
  });

  it('refuses a client\'s token with 403 FORBIDDEN', async () => {
    const { app } = await serve();
    const res = await app.inject({ method: 'POST', url: '/admin/upstreams/x/suspend', headers: { authorization: `Bearer ${CLIENT}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ status: 403, errorCode: 'FORBIDDEN', requestUri: '/admin/upstreams/x/suspend' });
    expect(res.body).not.toContain(CLIENT);
  });

  it('takes new tokens on replace: the old ones are 401 from the next request', async () => {
    const { app, auth } = await serve();
    auth.replace([{ name: 'ops2', token: 'new-admin-token-0123456789' }]);
    expect((await app.inject({ url: '/admin/status', headers: { authorization: `Bearer ${ADMIN}` } })).statusCode).toBe(401);
    const res = await app.inject({ url: '/admin/status', headers: { authorization: 'Bearer new-admin-token-0123456789' } });
    expect(res.json()).toEqual({ admin: { name: 'ops2', via: 'bearer' } });
  });

  it('signs a session in through a lookup; a change made with it needs X-Smppd-Admin: 1 or an Origin of this host', async () => {
    const { app } = await serve(true);
    const cookie = 'smppd_admin=s1';
    expect((await app.inject({ url: '/admin/status', headers: { cookie } })).json()).toEqual({ admin: { name: 'web', via: 'session' } });
    const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/admin/upstreams/x/suspend', headers: { cookie, host: 'ops.example:8080', ...headers } });
    const bare = await post({});
    expect(bare.statusCode).toBe(403);
    expect(bare.json()).toMatchObject({ errorCode: 'FORBIDDEN' });
    expect((await post({ origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await post({ origin: 'https://ops.example:8080' })).statusCode).toBe(200);
    expect((await post({ 'x-smppd-admin': '1' })).statusCode).toBe(200);
    // Another cookie is no session; a bearer token needs no proof.
    expect((await app.inject({ url: '/admin/status', headers: { cookie: 'smppd_admin=s2' } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/admin/upstreams/x/suspend', headers: { authorization: `Bearer ${ADMIN}` } })).statusCode).toBe(200);
  });

  it('lets a caller who is not signed in through a route of adminAuth optional, but not a client\'s token', async () => {
    const { app } = await serve();
    expect((await app.inject({ url: '/admin/' })).json()).toEqual({ admin: null });
    expect((await app.inject({ url: '/admin/', headers: { authorization: `Bearer ${ADMIN}` } })).json()).toEqual({ admin: { name: 'ops', via: 'bearer' } });
    expect((await app.inject({ url: '/admin/', headers: { authorization: `Bearer ${CLIENT}` } })).statusCode).toBe(403);
  });

  it('matches a typed token for a login form', async () => {
    const { auth } = await serve();
    expect(auth.matchToken(ADMIN)).toEqual({ name: 'ops', via: 'bearer' });
    expect(auth.matchToken(CLIENT)).toBeUndefined();
  });
});
