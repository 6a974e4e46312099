import { readFileSync } from 'node:fs';
import type { Clock } from '../../src/core/clock.js';
import type { Log } from '../../src/core/log.js';
import { silentLog } from '../../src/core/log.js';
import type { BindSettings } from '../../src/smpp/bind.js';
import { buildStatusTable } from '../../src/smpp/command-status.js';
import { noEngineMetrics, type EngineMetrics } from '../../src/smpp/engine-metrics.js';
import type { SubmitPart } from '../../src/smpp/part-outcome.js';
import { submitSmDefaults } from '../../src/smpp/pdu.js';
import { Pool } from '../../src/smpp/pool.js';
import type { UpstreamSettings } from '../../src/smpp/upstream-pool.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));
export const testTls = {
  ca: () => fixture('ca.crt'),
  serverCert: () => fixture('server.crt'),
  serverKey: () => fixture('server.key'),
  clientCert: () => fixture('client.crt'),
  clientKey: () => fixture('client.key'),
};

export interface TestUpstream {
  port: number;
  binds?: number;
  window?: number;
  ratePerBind?: number;
  burst?: number;
  password?: string;
  tls?: boolean;
  /** A CA to trust instead of the test CA (to make verification fail). */
  caOverride?: Buffer;
  onUncertain?: 'resend' | 'fail';
  responseTimeoutMs?: number;
  enquireLinkMs?: number;
  maxAttempts?: number;
  maxQueued?: number;
  maxPendingDeliveries?: number;
  accountRate?: number;
  throttlePauseMs?: number;
}

export function upstream(o: TestUpstream): UpstreamSettings {
  const binds: BindSettings[] = Array.from({ length: o.binds ?? 1 }, (_, index) => ({
    upstream: 'sim', index,
    connect: {
      host: '127.0.0.1', port: o.port, connectTimeoutMs: 5_000,
      tls: o.tls ? {
        ca: o.caOverride ?? testTls.ca(), cert: testTls.clientCert(), key: testTls.clientKey(),
        servername: 'localhost', rejectUnauthorized: true,
      } : false,
    },
    systemId: 'smppclient1', password: o.password ?? 'password', systemType: '', bindMode: 'transceiver',
    addressRange: '', addrTon: 0, addrNpi: 0,
    window: o.window ?? 100,
    responseTimeoutMs: o.responseTimeoutMs ?? 10_000,
    enquireLinkMs: o.enquireLinkMs ?? 30_000,
    ratePerBind: o.ratePerBind ?? 0,
    burst: o.burst ?? 20,
    throttle: { pauseMs: o.throttlePauseMs ?? 0, minRate: 10, backoff: 0.03, probe: 0.01 },
    reconnect: { initialMs: 50, maxMs: 1_000, multiplier: 2 },
    maxPendingDeliveries: o.maxPendingDeliveries ?? 1_000,
  }));
  return {
    name: 'sim', binds, accountRate: o.accountRate ?? 0, onUncertain: o.onUncertain ?? 'resend', maxAttempts: o.maxAttempts ?? 5,
    retryBackoff: { initialMs: 10, maxMs: 100, multiplier: 2 },
    maxQueued: o.maxQueued ?? 100_000, statusTable: buildStatusTable(),
  };
}

export function makePool(o: TestUpstream, clock: Clock, extra: { log?: Log; metrics?: EngineMetrics; deliver?: ConstructorParameters<typeof Pool>[0]['deliver'] } = {}): Pool {
  return new Pool({ upstreams: [upstream(o)], clock, log: extra.log ?? silentLog, metrics: extra.metrics ?? noEngineMetrics, deliver: extra.deliver });
}

/** A one-part GSM message to `dest` (text in ASCII, which GSM 03.38 shares for these characters). */
export function part(dest: string, text = 'hello', registeredDelivery = 0): SubmitPart {
  return { ...submitSmDefaults(), sourceAddr: 'Test', destinationAddr: dest, dataCoding: 0, registeredDelivery, shortMessage: Buffer.from(text, 'latin1') };
}

/** Waits (real time) until `check` is true, polling on the event loop. Fails after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Lets pending socket I/O run (a few event-loop turns), without measuring time. */
export async function ioTurns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** A Metrics recorder for assertions. */
export function recordingMetrics() {
  const counts = { uncertain: 0, late: 0, duplicate: 0, retry: 0, throttled: 0, reconnect: 0, deliveryThrottled: 0, responses: new Map<string, number>() };
  const metrics: EngineMetrics = {
    response: (_u, s) => counts.responses.set(s, (counts.responses.get(s) ?? 0) + 1),
    uncertain: () => { counts.uncertain++; },
    lateResponse: () => { counts.late++; },
    duplicate: () => { counts.duplicate++; },
    retry: () => { counts.retry++; },
    throttled: () => { counts.throttled++; },
    reconnect: () => { counts.reconnect++; },
    deliveryThrottled: () => { counts.deliveryThrottled++; },
  };
  return { counts, metrics };
}
