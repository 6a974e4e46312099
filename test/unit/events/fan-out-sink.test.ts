/** A client's events to its webhook and to the exchange: acknowledged when both took it; a retry goes only where it failed. */
import { describe, expect, it } from 'vitest';
import type { EventSink } from '../../../src/events/event-dispatcher.js';
import { FanOutSink } from '../../../src/events/fan-out-sink.js';
import type { PostOutcome } from '../../../src/events/webhook-client.js';

function scripted(origin: string, outcomes: PostOutcome[]): EventSink & { seen: number[]; closed: boolean } {
  const sink = {
    origin, seen: [] as number[], closed: false,
    post: async (_body: string, id: number) => {
      sink.seen.push(id);
      return outcomes.shift() ?? { ok: true, status: 200, ms: 1 };
    },
    close: async () => { sink.closed = true; },
  };
  return sink;
}

describe('FanOutSink', () => {
  it('acknowledges an event when every sink took it', async () => {
    const a = scripted('https://hooks.example.com', []);
    const b = scripted('amqp://mq:5672 vhost / exchange e', []);
    const fan = new FanOutSink([a, b]);
    expect(fan.origin).toBe('https://hooks.example.com + amqp://mq:5672 vhost / exchange e');
    expect(await fan.post('{}', 1)).toEqual({ ok: true, status: 200, ms: 1 });
    expect([a.seen, b.seen]).toEqual([[1], [1]]);
  });

  it('fails when one sink fails, and retries only that one', async () => {
    const a = scripted('a', [{ ok: true, status: 204, ms: 3 }]);
    const b = scripted('b', [{ ok: false, failure: 'network', error: 'NOT_CONNECTED', ms: 0 }]);
    const fan = new FanOutSink([a, b]);
    expect(await fan.post('{}', 5)).toEqual({ ok: false, failure: 'network', error: 'NOT_CONNECTED', ms: 3 });
    expect(await fan.post('{}', 5)).toMatchObject({ ok: true });
    expect([a.seen, b.seen]).toEqual([[5], [5, 5]]);
    // Forgotten once acknowledged: the same id again (a resend of a dead event) goes to both.
    await fan.post('{}', 5);
    expect([a.seen, b.seen]).toEqual([[5, 5], [5, 5, 5]]);
  });

  it('closes every sink', async () => {
    const a = scripted('a', []);
    const b = scripted('b', []);
    await new FanOutSink([a, b]).close();
    expect([a.closed, b.closed]).toEqual([true, true]);
  });
});
