/**
 * Answers of the admin API shaped as the admin API contract gives them, for the renderers'
 * tests: two upstreams (one with a bind in backoff, one suspended), two clients, a message
 * list with a next page, and one message's story.
 */
import type { AdminStatus, MessageList, MessageStory } from '../../src/ingress/http/admin-ui/admin-views.js';

export function sampleStatus(): AdminStatus {
  return {
    version: '0.1.0',
    instanceId: 'host-a',
    startedAt: '2026-11-27T00:00:00.000Z',
    uptimeSeconds: 7_380,
    store: { kind: 'sqlite', ok: true, latencyMs: 1.2, error: null },
    upstreams: [
      {
        name: 'demo',
        available: true,
        suspended: null,
        queued: 12,
        binds: [
          {
            id: 'demo#0', state: 'bound', detail: '', backoffSecondsLeft: null, boundSince: '2026-11-27T01:00:00.000Z',
            submitRate: { last10s: 950.1, last1m: 940.3 }, window: { size: 100, inUse: 37, held: 3 },
            throttle: { rate: 1000, learnedLimit: null, episodes: 0, throttledSubmits: 0, throttled: false },
          },
          {
            id: 'demo#1', state: 'backoff', detail: 'connect ECONNREFUSED 10.0.0.7:2775', backoffSecondsLeft: 4, boundSince: null,
            submitRate: { last10s: 0, last1m: 12.5 }, window: { size: 100, inUse: 0, held: 0 },
            throttle: { rate: 0, learnedLimit: null, episodes: 2, throttledSubmits: 57, throttled: true },
          },
        ],
      },
      {
        name: 'backup',
        available: true,
        suspended: { since: '2026-11-27T02:00:00.000Z', by: 'ops', reason: 'maintenance <window>' },
        queued: 0,
        binds: [
          {
            id: 'backup#0', state: 'bound', detail: '', backoffSecondsLeft: null, boundSince: '2026-11-27T00:00:01.000Z',
            submitRate: { last10s: 0, last1m: 0 }, window: { size: 10, inUse: 0, held: 0 },
            throttle: { rate: 50, learnedLimit: null, episodes: 0, throttledSubmits: 0, throttled: false },
          },
        ],
      },
    ],
    clients: [
      { name: 'app', queued: 12, outbox: { pending: 3, dead: 0 } },
      { name: 'shop', queued: 0, outbox: { pending: 0, dead: 1 } },
    ],
  };
}

export function sampleMessageList(): MessageList {
  return {
    messages: [
      {
        id: '9f1c2d3e-0000-4000-8000-000000000002', client: 'app', upstream: 'demo', sender: 'Acme', destination: '447700900123',
        status: 'DELIVERED', reason: null, parts: 1, acceptedAt: '2026-11-27T02:01:00.000Z', updatedAt: '2026-11-27T02:01:02.000Z',
      },
      {
        id: '9f1c2d3e-0000-4000-8000-000000000001', client: 'app', upstream: 'demo', sender: 'Acme', destination: '447700900123',
        status: 'REJECTED', reason: 'ESME_RINVDSTADR (0x0000000B)', parts: 2, acceptedAt: '2026-11-27T02:00:00.000Z', updatedAt: '2026-11-27T02:00:01.000Z',
      },
    ],
    next: 'cursor-abc',
  };
}

export function sampleMessageStory(): MessageStory {
  return {
    message: {
      id: '9f1c2d3e-0000-4000-8000-000000000002', client: 'app', upstream: 'demo', route: 'default', batchId: null, sender: 'Acme',
      destination: '447700900123', text: 'Your code is 1234\nThanks', encoding: 'GSM7', status: 'DELIVERED', reason: null,
      acceptedAt: '2026-11-27T02:01:00.000Z', updatedAt: '2026-11-27T02:01:02.000Z',
    },
    parts: [
      {
        part: 1, state: 'done', status: 'DELIVERED', reason: null, smscId: '0A1B2C', bind: 'demo#0', attempts: 1,
        sentAt: '2026-11-27T02:01:00.100Z', updatedAt: '2026-11-27T02:01:02.000Z',
      },
    ],
    history: [
      { at: '2026-11-27T02:01:00.000Z', part: null, status: 'SUBMITTED', reason: null, source: 'accept' },
      { at: '2026-11-27T02:01:00.120Z', part: 1, status: 'SENT', reason: null, source: 'submit' },
      { at: '2026-11-27T02:01:02.000Z', part: 1, status: 'DELIVERED', reason: 'stat:DELIVRD err:000', source: 'receipt' },
    ],
    events: [
      {
        id: 40, kind: 'status', status: 'SENT', state: 'delivered', attempts: 1, createdAt: '2026-11-27T02:01:00.120Z',
        nextAttemptAt: null, deliveredAt: '2026-11-27T02:01:00.300Z', lastError: null,
      },
      {
        id: 41, kind: 'status', status: 'DELIVERED', state: 'pending', attempts: 2, createdAt: '2026-11-27T02:01:02.000Z',
        nextAttemptAt: '2026-11-27T02:01:10.000Z', deliveredAt: null, lastError: 'HTTP 502',
      },
    ],
  };
}
