/** /healthz, /readyz and /metrics: served without a token; readiness with its reasons; requests counted by route. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, httpHarness, type Harness } from '../../support/http.js';

let h: Harness;
beforeEach(async () => {
  h = await httpHarness();
});
afterEach(async () => {
  await h.close();
});

describe('health and metrics endpoints', () => {
  it('/healthz answers without a token', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 when ready and 503 with the reasons when not, without a token', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready', upstreams: [] });
    const upstreams = [{ name: 'sim', available: false, bound: 0, binds: 2 }];
    h.health.current = { ready: false, reasons: ['route default: no upstream available (sim 0 of 2 binds bound)', 'stopping'], upstreams };
    const res = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'not ready', reasons: ['route default: no upstream available (sim 0 of 2 binds bound)', 'stopping'], upstreams });
  });

  it('/metrics serves the Prometheus text without a token', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toBe('# smppd test metrics\n');
  });

  it('counts each request by its route pattern, never by its path, and unknown paths as unmatched', async () => {
    await h.app.inject({ method: 'GET', url: '/sms/status/0194c1f0-6a2e-7c3d-9e1f-2a3b4c5d6e7f', headers: bearer() });
    await h.app.inject({ method: 'GET', url: '/sms/status/another-id', headers: bearer() });
    await h.app.inject({ method: 'GET', url: '/no/such/path', headers: bearer() });
    await h.app.inject({ method: 'GET', url: '/sms/list' });
    expect(h.requests).toEqual([
      'GET /sms/status/:messageId 404', 'GET /sms/status/:messageId 404', 'GET unmatched 404', 'GET /sms/list 401',
    ]);
  });
});
