/**
 * The webhook dispatcher against a real store and a sink whose answers the test decides, on a
 * ManualClock: retry times, the maximum age, order per message, the concurrency cap and stop.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { EventDispatcher, type EventClient, type EventMetrics, type EventSink } from '../../../src/events/event-dispatcher.js';
import type { PostOutcome } from '../../../src/events/webhook-client.js';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { until } from '../../support/engine.js';
import { recordingLog } from '../../support/http.js';
import { newMessage, storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

interface Post {
  body: { messageId?: string; status?: string };
  eventId: number;
  answer: (o: PostOutcome) => void;
}

/** A sink whose posts wait until the test answers them. */
function manualSink(): EventSink & { posts: Post[]; open: () => Post[] } {
  const posts: Post[] = [];
  const answered = new Set<Post>();
  return {
    origin: 'http://hook.test',
    posts,
    open: () => posts.filter((p) => !answered.has(p)),
    post(body, eventId) {
      return new Promise<PostOutcome>((resolve) => {
        const p: Post = { body: JSON.parse(body) as Post['body'], eventId, answer: (o) => { answered.add(p); resolve(o); } };
        posts.push(p);
      });
    },
    close: async () => {},
  };
}

const OK: PostOutcome = { ok: true, status: 200, ms: 3 };
const FAIL: PostOutcome = { ok: false, failure: 'status', status: 503, ms: 3 };
const SECOND = 1_000;

describe('EventDispatcher', () => {
  let folder: StoreFolder;
  let store: SqliteStore;
  let clock: ManualClock;
  let sink: ReturnType<typeof manualSink>;
  let logs: string[];
  let metrics: { attempts: string[]; dead: number; superseded: number; delivered: number };
  let dispatcher: EventDispatcher;

  const client = (over: Partial<EventClient> = {}): EventClient => ({
    name: 'acme', sink, concurrency: 2, retry: { initialMs: 1 * SECOND, maxMs: 8 * SECOND, multiplier: 2 },
    maxAgeMs: 60 * SECOND, leaseMs: 60 * SECOND, ...over,
  });

  function start(over: Partial<EventClient> = {}): void {
    const recorder: EventMetrics = {
      webhookAttempt: (_c, result) => metrics.attempts.push(result),
      eventDelivered: () => { metrics.delivered++; },
      eventDead: () => { metrics.dead++; },
      eventsSuperseded: (n) => { metrics.superseded += n; },
    };
    // The jitter draws 0.5: each delay is half its ceiling.
    dispatcher = new EventDispatcher({ store, clock, log: recordingLog(logs), clients: [client(over)], metrics: recorder, random: () => 0.5, pollMs: 100 });
    dispatcher.start();
  }

  /** Accepts messages now, by the manual clock's wall time: each gets its SUBMITTED event. */
  const accept = (...ids: string[]) => store.accept({ messages: ids.map((id) => newMessage(id)), now: clock.wallNow() });
  const tick = async (ms: number) => {
    clock.advance(ms);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  const postsSeen = (n: number) => until(() => sink.posts.length >= n, 5_000, `${n} posts`);

  beforeEach(async () => {
    folder = storeFolder();
    store = await folder.open();
    clock = new ManualClock(0, Date.UTC(2026, 0, 1));
    sink = manualSink();
    logs = [];
    metrics = { attempts: [], dead: 0, superseded: 0, delivered: 0 };
  });
  afterEach(async () => {
    for (const p of sink.open()) p.answer(OK);
    await dispatcher.stop();
    await folder.cleanup();
  });

  it('sends a message\'s events one at a time, in order, and never more than concurrency at once', async () => {
    await accept('a', 'b', 'c');
    await store.claim('up1', clock.wallNow(), 10);
    await store.recordSubmit('a', [{ part: 1, kind: 'accepted', smscId: 'A', matchKey: 'a', bind: 'b', attempts: 1 }], clock.wallNow());
    start();
    await postsSeen(2);
    await tick(0);
    expect(sink.posts.map((p) => p.body.messageId)).toEqual(['a', 'b']);
    sink.posts[0]!.answer(OK);
    await postsSeen(3);
    // c's SUBMITTED came up before a's SENT could: a's SENT waited for its SUBMITTED to be recorded.
    sink.posts[1]!.answer(OK);
    sink.posts[2]!.answer(OK);
    await until(() => sink.posts.some((p) => p.body.messageId === 'a' && p.body.status === 'SENT'), 5_000, "a's SENT");
    expect(sink.open().length).toBeLessThanOrEqual(2);
    const order = sink.posts.filter((p) => p.body.messageId === 'a').map((p) => p.body.status);
    expect(order).toEqual(['SUBMITTED', 'SENT']);
  });

  it('retries a failure after a jittered, growing, capped delay, and the later event of the message waits for it', async () => {
    await accept('a');
    await store.claim('up1', clock.wallNow(), 10);
    await store.recordSubmit('a', [{ part: 1, kind: 'accepted', smscId: 'A', matchKey: 'a', bind: 'b', attempts: 1 }], clock.wallNow());
    start();
    const row = () => folder.inspect().prepare("SELECT attempts, next_attempt_at FROM outbox WHERE message_id = 'a' ORDER BY id LIMIT 1")
      .get() as { attempts: number; next_attempt_at: number };
    const delays: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await postsSeen(attempt + 1);
      const failedAt = clock.wallNow();
      sink.posts[attempt]!.answer(FAIL);
      await until(() => row().attempts === attempt + 1, 5_000, `attempt ${attempt + 1} recorded`);
      const delay = row().next_attempt_at - failedAt;
      delays.push(delay);
      // Not a moment before its time (polls keep coming), then at the first poll after it.
      await tick(delay - 1);
      expect(sink.posts).toHaveLength(attempt + 1);
      await tick(100);
      await postsSeen(attempt + 2);
      expect(sink.posts[attempt + 1]!.body.status).toBe('SUBMITTED');
    }
    // Half of 1, 2, 4, 8, 8 s: 0.5 of a ceiling that doubles up to maxMs.
    expect(delays).toEqual([500, 1_000, 2_000, 4_000, 4_000]);
    sink.posts[5]!.answer(OK);
    await until(() => sink.posts.length === 7, 5_000, 'SENT after SUBMITTED');
    expect(sink.posts[6]!.body.status).toBe('SENT');
    // The failure was logged once, the recovery once.
    expect(logs.filter((l) => l.includes('webhook_failing'))).toHaveLength(1);
    expect(logs.filter((l) => l.includes('webhook_recovered'))).toHaveLength(1);
    expect(metrics.attempts.filter((r) => r === 'status')).toHaveLength(5);
  });

  it('parks an event as dead when it has failed for maxAge, the last try falling on the deadline; the next event then goes', async () => {
    await accept('a');
    await store.claim('up1', clock.wallNow(), 10);
    await store.recordSubmit('a', [{ part: 1, kind: 'accepted', smscId: 'A', matchKey: 'a', bind: 'b', attempts: 1 }], clock.wallNow());
    start({ maxAgeMs: 3 * SECOND, retry: { initialMs: 10 * SECOND, maxMs: 10 * SECOND, multiplier: 2 } });
    await postsSeen(1);
    sink.posts[0]!.answer(FAIL);
    // The jittered delay would be 5 s; the deadline is at 3 s.
    await tick(2_900);
    expect(sink.posts).toHaveLength(1);
    await tick(200);
    await postsSeen(2);
    sink.posts[1]!.answer(FAIL);
    await until(async () => (await store.counts()).deadEvents === 1, 5_000, 'dead');
    await tick(100);
    await postsSeen(3);
    expect(sink.posts[2]!.body.status).toBe('SENT');
    expect(metrics.dead).toBe(1);
    const [dead] = await store.listDeadEvents('acme', 10);
    expect(dead).toMatchObject({ messageId: 'a', attempts: 2, lastError: 'HTTP 503' });
    // Delivering SENT makes the dead SUBMITTED moot: it is dropped, never sent after SENT.
    sink.posts[2]!.answer(OK);
    await until(() => metrics.superseded === 1, 5_000, 'superseded');
    expect(await store.listDeadEvents('acme', 10)).toEqual([]);
  });

  it('stop lets requests in flight finish and records them, and gives back the events it had claimed but not sent', async () => {
    await accept('a', 'b', 'c', 'd', 'e');
    start({ concurrency: 2 });
    await postsSeen(2);
    // Two in flight, the other three claimed ahead, waiting for a slot.
    await until(() => dispatcher.load('acme').waiting === 3, 5_000, 'three waiting');
    const stopped = dispatcher.stop();
    sink.posts[0]!.answer(OK);
    sink.posts[1]!.answer(FAIL);
    await stopped;
    expect(sink.posts).toHaveLength(2);
    // a delivered, b retried later; c, d, e due at once for the next start.
    const due = await store.claimEvents('acme', clock.wallNow(), 10, clock.wallNow() + 1);
    expect(due.map((e) => (JSON.parse(e.payload) as { messageId: string }).messageId)).toEqual(['c', 'd', 'e']);
    expect((await store.counts()).outbox).toBe(4);
  });

  it('an acknowledged event is not sent again while its outcome waits to be recorded, even after its lease ran out', async () => {
    await accept('a');
    // The store records outcomes only when the test opens the gate.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => { open = resolve; });
    const settle = store.settleEvents.bind(store);
    store.settleEvents = async (outcomes, now) => { await gate; return settle(outcomes, now); };
    // What each of the dispatcher's claims got from the store. (A claim of the test's own would
    // race the dispatcher's polls, which take the event whenever its lease has run out.)
    const claimed: number[] = [];
    const claim = store.claimEvents.bind(store);
    store.claimEvents = async (...args) => {
      const events = await claim(...args);
      claimed.push(...events.map((e) => e.id));
      return events;
    };
    start({ leaseMs: 10 * SECOND });
    await postsSeen(1);
    sink.posts[0]!.answer(OK);
    const id = sink.posts[0]!.eventId;
    // Past the lease: claims run on every poll and the store hands the event out again.
    for (let i = 0; i < 5; i++) await tick(5 * SECOND);
    await until(() => claimed.filter((c) => c === id).length >= 2, 5_000, 'the event handed out again');
    expect(sink.posts).toHaveLength(1);
    open();
    await until(async () => (await store.counts()).outbox === 0, 5_000, 'recorded');
    expect(sink.posts).toHaveLength(1);
  });

  it('a sink that rejects does not leak its slot: the event is retried', async () => {
    await accept('a');
    let calls = 0;
    const flaky: EventSink = {
      origin: 'http://flaky.test',
      post: async () => { calls++; if (calls === 1) throw new Error('boom'); return OK; },
      close: async () => {},
    };
    sink = Object.assign(flaky, { posts: [] as Post[], open: () => [] as Post[] }) as unknown as ReturnType<typeof manualSink>;
    start();
    await until(async () => (await store.counts()).outbox === 0, 5_000, 'delivered after the rejection');
    expect(calls).toBe(2);
    expect(dispatcher.load('acme')).toEqual({ inFlight: 0, waiting: 0 });
  });
});
