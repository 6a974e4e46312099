import type { ClientConfig, SmppdConfig, UpstreamConfig } from '../config/schema.js';
import type { ComposeSettings } from '../dispatch/compose.js';
import type { BindSettings } from '../smpp/bind.js';
import { buildStatusTable } from '../smpp/command-status.js';
import type { UpstreamSettings } from '../smpp/upstream-pool.js';
import type { DispatcherUpstream } from '../dispatch/dispatcher.js';

/** Jobs an upstream queues in front of its binds: a few seconds of work at full rate. */
const QUEUE_SECONDS = 5;

/** Turns one validated upstream config into the engine's settings (seconds → milliseconds). */
export function upstreamSettings(u: UpstreamConfig): UpstreamSettings {
  const binds: BindSettings[] = Array.from({ length: u.binds }, (_, index) => ({
    upstream: u.name,
    index,
    connect: {
      host: u.host,
      port: u.port,
      tls: u.tls === false ? false : { ...u.tls },
      connectTimeoutMs: u.connectTimeoutSeconds * 1000,
    },
    systemId: u.systemId,
    password: u.password,
    systemType: u.systemType,
    bindMode: u.bindMode,
    addressRange: u.addressRange,
    addrTon: u.addrTon,
    addrNpi: u.addrNpi,
    window: u.window,
    responseTimeoutMs: u.responseTimeoutSeconds * 1000,
    enquireLinkMs: u.enquireLinkSeconds * 1000,
    ratePerBind: u.ratePerBind,
    burst: u.burst,
    throttle: {
      pauseMs: u.throttle.pauseSeconds * 1000,
      minRate: u.throttle.minRatePerBind,
      backoff: u.throttle.backoffPercent / 100,
      probe: u.throttle.probePercentPerSecond / 100,
    },
    reconnect: { initialMs: u.reconnect.initialSeconds * 1000, maxMs: u.reconnect.maxSeconds * 1000, multiplier: 2 },
    maxPendingDeliveries: u.maxPendingDeliveries,
  }));
  const perSecond = u.ratePerBind > 0 ? u.ratePerBind * u.binds : 10_000;
  return {
    name: u.name,
    binds,
    accountRate: u.accountRate,
    onUncertain: u.onUncertain,
    maxAttempts: u.retry.maxAttempts,
    retryBackoff: { initialMs: u.retry.initialSeconds * 1000, maxMs: u.retry.maxSeconds * 1000, multiplier: 2 },
    maxQueued: Math.max(u.window * u.binds, perSecond * QUEUE_SECONDS),
    statusTable: buildStatusTable(Object.fromEntries(Object.entries(u.commandStatus).map(([code, cls]) => [Number(code), { class: cls }]))),
  };
}

/**
 * What the dispatcher may hand one upstream's pool: twice what the windows hold, so the next
 * messages wait in the pool's queue rather than in the store; but never more than that queue
 * takes (`settings.maxQueued`), which on a slow upstream (ratePerBind under 0.4 × window) is the
 * smaller: while pacing holds the windows nearly empty, almost everything handed over waits in
 * the queue, and what does not fit would be refused and requeued.
 */
export function dispatcherUpstream(u: UpstreamConfig, settings: UpstreamSettings = upstreamSettings(u)): DispatcherUpstream {
  return { name: u.name, maxInPool: Math.min(u.window * u.binds * 2, settings.maxQueued), onUncertain: u.onUncertain };
}

/** Parts a second the upstreams that send can take at most, for Retry-After; 0 (no limit) when one is unpaced. */
export function drainPerSecond(upstreams: SmppdConfig['upstreams']): number {
  const senders = upstreams.filter((u) => u.bindMode !== 'receiver');
  return senders.some((u) => u.ratePerBind === 0) ? 0 : senders.reduce((sum, u) => sum + u.ratePerBind * u.binds, 0);
}

export function composeSettings(u: SmppdConfig['upstreams'][number]): ComposeSettings {
  return {
    defaultAlphabet: u.defaultAlphabet, nationalLanguageShift: u.nationalLanguageShift, longMessages: u.longMessages,
    udhReference: u.udhReference, maxParts: u.maxParts, requestReceipts: u.requestReceipts, sourceAddress: u.sourceAddress,
    ...(u.regulatoryTlvs !== undefined ? { regulatoryTlvs: u.regulatoryTlvs } : {}), requireRegulatory: u.requireRegulatory,
  };
}

export function clientMaxQueued(clients: readonly ClientConfig[]): Map<string, number> {
  return new Map(clients.flatMap((c) => (c.maxQueued === undefined ? [] : [[c.name, c.maxQueued] as const])));
}

export function clientWeights(clients: readonly ClientConfig[]): Array<{ name: string; weight: number }> {
  return clients.map((c) => ({ name: c.name, weight: c.weight }));
}
