/**
 * A single send straight from its accept to the pool (`Dispatcher.admit`, `Acceptor`): only when
 * the lane has room and nothing older waits in the queue, never overtaking a queued message, and
 * without a claim for the messages that went direct.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { ErrorCode, SmppdError } from '../../../src/core/errors.js';
import { silentLog } from '../../../src/core/log.js';
import { Acceptor, claimedOf } from '../../../src/dispatch/accept.js';
import { Dispatcher, type SubmitTarget } from '../../../src/dispatch/dispatcher.js';
import type { MessageOutcome, SubmitPart } from '../../../src/smpp/part-outcome.js';
import { claimShares, walkClaim } from '../../../src/store/rules/claim-shares.js';
import type { ClaimedMessage, ClaimShares, PartResult, SubmitClaims, TurnsReleased } from '../../../src/store/claims.js';
import type { Accepted, AcceptRequest, MessageIntake, QueueDepth } from '../../../src/store/intake.js';
import { newMessage, partBody } from '../../support/sqlite-store.js';

const message = (id: string) => claimedOf(newMessage(id, { parts: [partBody(id)] }));

const COMPOSE = { defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true } as const;

/** Whether a message would go direct now; a direct admission is given back at once. */
const directNow = (dispatcher: Dispatcher): boolean => {
  const a = dispatcher.admit('up1');
  a.done();
  return a.direct;
};

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** A store whose queue is an array; `claim` can be held open to let other things happen during it. */
class QueueStore implements MessageIntake, SubmitClaims {
  constructor(readonly claimsOnAccept = true) {}
  queue: ClaimedMessage[] = [];
  claims = 0;
  readonly accepts: AcceptRequest[] = [];
  readonly recorded: Array<{ id: string; results: PartResult[] }> = [];
  holdClaims = false;
  #heldClaims: Array<() => void> = [];
  failAccept: Error | undefined;

  /** Each client's oldest, as many as its share (`SubmitClaims.claim`). */
  async claim(_upstream: string, _now: number, take: number | ClaimShares): Promise<ClaimedMessage[]> {
    this.claims++;
    const taken = new Map<string, number>();
    const clients = [...new Set(this.queue.map((m) => m.client))].sort();
    walkClaim(claimShares(take), clients, (client, limit) => {
      const n = Math.min(limit, this.queue.filter((m) => m.client === client).length);
      taken.set(client, n);
      return n;
    });
    const snapshot: ClaimedMessage[] = [];
    this.queue = this.queue.filter((m) => {
      const n = taken.get(m.client) ?? 0;
      if (n === 0) return true;
      taken.set(m.client, n - 1);
      snapshot.push(m);
      return false;
    });
    if (this.holdClaims) await new Promise<void>((resolve) => this.#heldClaims.push(resolve));
    return snapshot;
  }

  releaseClaims(): void {
    for (const resolve of this.#heldClaims.splice(0)) resolve();
  }

  /** Queues a claimed request instead, as the PostgreSQL store does without its instance lock. */
  declineClaims = false;

  async accept(request: AcceptRequest): Promise<Accepted> {
    await flush();
    if (this.failAccept) throw this.failAccept;
    this.accepts.push(request);
    const claimed = request.claimed === true && !this.declineClaims;
    if (!claimed) this.queue.push(...request.messages.map(claimedOf));
    return { batchId: null, scheduleId: null, ...(claimed ? { claimed } : {}) };
  }

  /** Outcomes wait for `releaseRecords` before they are recorded. */
  holdRecords = false;
  #heldRecords: Array<() => void> = [];

  async recordSubmit(id: string, results: PartResult[]): Promise<void> {
    if (this.holdRecords) await new Promise<void>((resolve) => this.#heldRecords.push(resolve));
    this.recorded.push({ id, results });
  }

  /** Records the first `n` held outcomes (all by default). */
  releaseRecords(n = Infinity): void {
    for (const resolve of this.#heldRecords.splice(0, n)) resolve();
  }

  queueDepth = async (): Promise<QueueDepth> => ({ queued: 0, byClient: [] });
  recoverInflight = async (): Promise<number> => 0;
  recoverAbandoned = async (): Promise<number> => 0;
  releaseDue = async (): Promise<number> => 0;
  releaseTurns = async (): Promise<TurnsReleased> => ({ released: 0, nextAt: null });
  expire = async (): Promise<number> => 0;
}

/** A pool that answers every submit when told to. */
class HeldPool implements SubmitTarget {
  readonly submitted: string[] = [];
  #answers: Array<() => void> = [];
  /** Answers at once from now on (to let the dispatcher stop). */
  answering = false;
  /** Refuses every submit as a stopped pool does. */
  refuse = false;
  full = false;
  accepting(): boolean {
    return !this.full;
  }

  submit(_upstream: string, parts: SubmitPart[]): Promise<MessageOutcome> {
    if (this.refuse) return Promise.reject(new SmppdError(ErrorCode.POOL_STOPPED, 'the pool is stopped'));
    this.submitted.push(parts[0]!.shortMessage.toString('latin1'));
    const n = this.submitted.length;
    return new Promise((resolve) => {
      this.#answers.push(() => resolve({
        parts: parts.map((_, i) => ({ kind: 'accepted', messageId: `S${n}-${i}`, bind: 'b1', attempts: 1, latencyMs: 1 })),
      } satisfies MessageOutcome));
      if (this.answering) this.answerAll();
    });
  }

  answerAll(): void {
    for (const answer of this.#answers.splice(0)) answer();
  }

  onDrain(): () => void {
    return () => {};
  }
}

async function rig(maxInPool = 10, claimsOnAccept = true) {
  const clock = new ManualClock();
  const store = new QueueStore(claimsOnAccept);
  const pool = new HeldPool();
  const dispatcher = new Dispatcher({
    store, pool, clock, log: silentLog, upstreams: [{ name: 'up1', maxInPool, onUncertain: 'resend' }], pollMs: 250,
    clients: [{ name: 'acme', weight: 1 }],
  });
  let wakes = 0;
  const acceptor = new Acceptor({
    store, clock, maxQueued: 1_000, upstreams: [{ name: 'up1', compose: COMPOSE }],
    admit: (upstream) => dispatcher.admit(upstream), onAccepted: () => { wakes++; dispatcher.wake(); },
  });
  await dispatcher.start();
  await flush();
  const stop = async (): Promise<void> => {
    pool.answering = true;
    pool.answerAll();
    await dispatcher.stop();
  };
  const send = (text: string) => acceptor.send({ client: 'acme', senderId: 'ACME', destination: '971500000001', message: text, messageType: 'TEXT' });
  return { clock, store, pool, dispatcher, acceptor, send, stop, wakes: () => wakes };
}

describe('Dispatcher.admit', () => {
  it('before a claim has found the queue empty, a message is queued; after, it goes to the pool from its accept, without a claim', async () => {
    const clock = new ManualClock();
    const store = new QueueStore();
    const pool = new HeldPool();
    const dispatcher = new Dispatcher({ store, pool, clock, log: silentLog, upstreams: [{ name: 'up1', maxInPool: 10, onUncertain: 'resend' }] });
    const early = dispatcher.admit('up1');
    expect(early.direct).toBe(false);
    early.done();
    await dispatcher.start();
    await flush();
    expect(store.claims).toBe(1);
    const admission = dispatcher.admit('up1');
    expect(admission.direct).toBe(true);
    expect(dispatcher.inPool('up1')).toBe(1);
    admission.handOver(message('x'));
    expect(pool.submitted).toEqual(['x']);
    expect(dispatcher.inPool('up1')).toBe(1);
    pool.answerAll();
    await flush();
    expect(store.recorded).toEqual([{ id: 'x', results: [expect.objectContaining({ part: 1, kind: 'accepted', smscId: 'S1-0' })] }]);
    expect(dispatcher.inPool('up1')).toBe(0);
    // Settling a message of a caught-up lane claims nothing: nothing waits.
    expect(store.claims).toBe(1);
    pool.answering = true;
    await dispatcher.stop();
  });

  it('has room for maxInPool messages: the next is queued, and so is every one after it until a claim catches up', async () => {
    const { store, pool, dispatcher, clock, stop } = await rig(2);
    const a = dispatcher.admit('up1');
    const b = dispatcher.admit('up1');
    expect([a.direct, b.direct]).toEqual([true, true]);
    const c = dispatcher.admit('up1');
    expect(c.direct).toBe(false);
    a.handOver(message('a'));
    b.done(); // b's accept failed: its room is back
    expect(dispatcher.inPool('up1')).toBe(1);
    // Room again, but c (queued) is older than any new message: no overtaking.
    expect(dispatcher.admit('up1').direct).toBe(false);
    store.queue.push(message('c'));
    c.done();
    pool.answerAll();
    clock.advance(250);
    await flush();
    expect(pool.submitted).toEqual(['a', 'c']);
    expect(store.recorded.map((r) => r.id)).toEqual(['a']);
    await stop();
  });

  it('a message gives its room back at its outcome, before the commit; twice maxInPool outcomes may wait for theirs, then the lane waits', async () => {
    const { store, pool, dispatcher, stop } = await rig(1);
    store.holdRecords = true;
    store.queue.push(...['m1', 'm2', 'm3'].map(message));
    dispatcher.wake();
    await flush();
    expect(pool.submitted).toEqual(['m1']);
    pool.answerAll(); // m1's outcome, not yet recorded: room for the next at once
    await flush();
    expect(pool.submitted).toEqual(['m1', 'm2']);
    pool.answerAll();
    await flush();
    expect(store.recorded).toEqual([]);
    // Two outcomes wait for their commit (m1, m2): no room, although the pool holds nothing.
    expect(dispatcher.inPool('up1')).toBe(0);
    expect(pool.submitted).toEqual(['m1', 'm2']);
    store.releaseRecords(1);
    await flush();
    expect(store.recorded.map((r) => r.id)).toEqual(['m1']);
    expect(pool.submitted).toEqual(['m1', 'm2', 'm3']);
    store.holdRecords = false;
    store.releaseRecords();
    await stop();
  });

  it('a queued message that the catching-up claim did not see goes at its accept\'s wake-up, after the direct sends of that moment', async () => {
    const { store, pool, dispatcher, stop } = await rig();
    const a = dispatcher.admit('up1');
    pool.full = true;
    const b = dispatcher.admit('up1');
    pool.full = false;
    expect([a.direct, b.direct]).toEqual([true, false]);
    a.handOver(message('a'));
    // a's outcome starts a claim; b commits after the claim's snapshot.
    store.holdClaims = true;
    pool.answerAll();
    await flush();
    expect(store.claims).toBe(2);
    store.queue.push(message('b'));
    store.releaseClaims();
    await flush();
    const c = dispatcher.admit('up1');
    expect(c.direct).toBe(true);
    c.handOver(message('c'));
    store.holdClaims = false;
    dispatcher.wake(); // b's accept, after its commit
    await flush();
    expect(pool.submitted).toEqual(['a', 'c', 'b']);
    await stop();
  });

  it('a claim cut short by the room leaves a backlog: each settled message claims more, without the poll, and new sends queue behind it', async () => {
    const { store, pool, dispatcher, stop } = await rig(2);
    store.queue.push(message('q1'), message('q2'), message('q3'), message('q4'));
    dispatcher.wake(); // a bulk upload's accept, say: no admission
    await flush();
    expect(pool.submitted).toEqual(['q1', 'q2']);
    expect(directNow(dispatcher)).toBe(false);
    pool.answerAll();
    await flush();
    expect(pool.submitted).toEqual(['q1', 'q2', 'q3', 'q4']);
    pool.answerAll();
    await flush();
    // The last claim came back short: caught up again.
    expect(directNow(dispatcher)).toBe(true);
    await stop();
  });

  it('a claim that takes all it asked for leaves the lane not caught up', async () => {
    const clock = new ManualClock();
    const store = new QueueStore();
    const pool = new HeldPool();
    const dispatcher = new Dispatcher({
      store, pool, clock, log: silentLog, upstreams: [{ name: 'up1', maxInPool: 10, onUncertain: 'resend' }], claimBatch: 2,
    });
    await dispatcher.start();
    await flush();
    expect(directNow(dispatcher)).toBe(true);
    await flush();
    store.queue.push(message('q1'), message('q2'));
    store.holdClaims = true;
    dispatcher.wake();
    await flush();
    const claims = store.claims;
    store.releaseClaims();
    await flush();
    // Two of two: the loop claims again at once, and while that claim runs new sends queue.
    expect(store.claims).toBe(claims + 1);
    expect(directNow(dispatcher)).toBe(false);
    store.holdClaims = false;
    store.releaseClaims();
    await flush();
    expect(directNow(dispatcher)).toBe(true);
    pool.answering = true;
    pool.answerAll();
    await dispatcher.stop();
  });

  it('with a store that does not claim at accept, every settled message claims again (the SQLite store)', async () => {
    for (const claimsOnAccept of [false, true]) {
      const { store, pool, dispatcher, stop } = await rig(10, claimsOnAccept);
      store.queue.push(message('q1'));
      dispatcher.wake();
      await flush();
      expect(pool.submitted).toEqual(['q1']);
      // Ready without a wake-up (a retry whose time came): a settlement claims it, where only
      // the poll would for a store that claims at accept.
      store.queue.push(message('q2'));
      pool.answerAll();
      await flush();
      expect(pool.submitted).toEqual(claimsOnAccept ? ['q1'] : ['q1', 'q2']);
      await stop();
    }
  });

  it('stop waits for a direct accept under way; its hand-over after the stop is requeued by the stopped pool', async () => {
    const { store, pool, dispatcher } = await rig();
    const admission = dispatcher.admit('up1');
    expect(admission.direct).toBe(true);
    let stopped = false;
    const stopping = dispatcher.stop().then(() => { stopped = true; });
    await flush();
    expect(stopped).toBe(false);
    pool.refuse = true;
    admission.handOver(message('late'));
    await stopping;
    expect(store.recorded).toEqual([{ id: 'late', results: [expect.objectContaining({ part: 1, kind: 'requeue' })] }]);
  });

  it('stop waits for a claim under way; what it took after the pool stopped is requeued', async () => {
    const { store, pool, dispatcher } = await rig();
    store.queue.push(message('q1'));
    store.holdClaims = true;
    dispatcher.wake();
    await flush();
    let stopped = false;
    const stopping = dispatcher.stop().then(() => { stopped = true; });
    await flush();
    expect(stopped).toBe(false);
    pool.refuse = true;
    store.releaseClaims();
    await stopping;
    expect(store.recorded).toEqual([{ id: 'q1', results: [expect.objectContaining({ part: 1, kind: 'requeue' })] }]);
  });

  it('a stopped dispatcher admits nothing direct; an unknown upstream is queued', async () => {
    const { dispatcher, stop } = await rig();
    expect(dispatcher.admit('nope').direct).toBe(false);
    await stop();
    expect(dispatcher.admit('up1').direct).toBe(false);
  });
});

describe('Acceptor with the dispatcher admitting', () => {
  it('stores an admitted send claimed and hands it over after the commit, without waking a claim', async () => {
    const { store, pool, send, wakes, stop } = await rig();
    const { messageId } = await send('hello');
    expect(store.accepts).toHaveLength(1);
    expect(store.accepts[0]).toMatchObject({ claimed: true, messages: [{ id: messageId }] });
    expect(pool.submitted).toHaveLength(1);
    expect(wakes()).toBe(0);
    expect(store.claims).toBe(1);
    await stop();
  });

  it('a send that is not admitted is stored queued and wakes the dispatcher, whose claim takes it', async () => {
    const { store, pool, send, wakes, stop } = await rig(1);
    await send('one');
    await send('two');
    expect(store.accepts.map((a) => a.claimed)).toEqual([true, undefined]);
    expect(wakes()).toBe(1);
    pool.answerAll();
    await flush();
    expect(pool.submitted).toHaveLength(2);
    await stop();
  });

  it('a send the store queued after all (no claim) is given back to the dispatcher, which claims it', async () => {
    const { store, pool, send, wakes, dispatcher, stop } = await rig(1);
    store.declineClaims = true;
    await send('declined');
    expect(store.accepts.map((a) => a.claimed)).toEqual([true]);
    expect(wakes()).toBe(1);
    await flush();
    expect(pool.submitted).toEqual(['declined']);
    expect(dispatcher.inPool('up1')).toBe(1);
    await stop();
  });

  it('a failed accept gives the room back and fails the send', async () => {
    const { store, send, dispatcher, stop } = await rig(1);
    store.failAccept = new Error('store down');
    await expect(send('x')).rejects.toThrow('store down');
    expect(dispatcher.inPool('up1')).toBe(0);
    store.failAccept = undefined;
    await send('y');
    expect(store.accepts.map((a) => a.claimed)).toEqual([true]);
    await stop();
  });

  it('asks nothing of the dispatcher when the store does not claim at accept', async () => {
    const clock = new ManualClock();
    const store = { queueDepth: async () => ({ queued: 0, byClient: [] }), accept: async (r: AcceptRequest) => { accepts.push(r); return { batchId: null, scheduleId: null }; } };
    const accepts: AcceptRequest[] = [];
    let admits = 0;
    const acceptor = new Acceptor({
      store, clock, maxQueued: 10, upstreams: [{ name: 'up1', compose: COMPOSE }],
      admit: () => { admits++; throw new Error('not asked'); },
    });
    await acceptor.send({ client: 'acme', senderId: 'ACME', destination: '971500000001', message: 'x', messageType: 'TEXT' });
    expect(admits).toBe(0);
    expect(accepts[0]?.claimed).toBeUndefined();
  });
});
