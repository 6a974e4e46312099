/**
 * One client's events to several sinks (its webhook and the event exchange): an event is
 * acknowledged when every sink took it. A retry goes only to the sinks that have not taken it
 * yet, so a working sink does not see the event again because another one failed (unless the
 * process restarted in between, or very many events are failing: delivery stays at least once).
 */
import type { EventSink } from './event-dispatcher.js';
import type { PostOutcome } from './webhook-client.js';

/** Events remembered as partly delivered, at most; past it the oldest is forgotten (and may be sent again to every sink). */
const MAX_PARTLY_DELIVERED = 100_000;

export class FanOutSink implements EventSink {
  readonly origin: string;
  readonly #sinks: readonly EventSink[];
  /** Event id → the indexes of the sinks that took it. */
  readonly #taken = new Map<number, Set<number>>();

  constructor(sinks: readonly EventSink[]) {
    this.#sinks = sinks;
    this.origin = sinks.map((s) => s.origin).join(' + ');
  }

  async post(body: string, eventId: number): Promise<PostOutcome> {
    const taken = this.#taken.get(eventId) ?? new Set<number>();
    const results = await Promise.all(this.#sinks.map((sink, i) => (taken.has(i) ? null : sink.post(body, eventId))));
    let failure: PostOutcome | undefined;
    let ok: PostOutcome | undefined;
    let ms = 0;
    results.forEach((r, i) => {
      if (r === null) return;
      ms = Math.max(ms, r.ms);
      if (r.ok) {
        taken.add(i);
        ok ??= r;
      } else failure ??= r;
    });
    this.#taken.delete(eventId);
    if (failure === undefined) return { ...(ok ?? { ok: true, status: 200 }), ms };
    if (taken.size === 0) return { ...failure, ms };
    this.#taken.set(eventId, taken);
    if (this.#taken.size > MAX_PARTLY_DELIVERED) this.#taken.delete(this.#taken.keys().next().value!);
    return { ...failure, ms };
  }

  async close(): Promise<void> {
    await Promise.all(this.#sinks.map((s) => s.close()));
  }
}
