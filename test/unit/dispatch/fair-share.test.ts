/**
 * Fair sharing of the binds between clients (`FairShare`), against a queue that claims as the
 * stores do (`SubmitClaims.claim`: each client's oldest, as many as its share): room divided by weight,
 * unused shares passed on, a newcomer served at its first claim, claims in fair order, and
 * "caught up" only when no client filled its share.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairShare, PROBE } from '../../../src/dispatch/fair-share.js';
import { claimShares, walkClaim } from '../../../src/store/rules/claim-shares.js';
import type { ClaimedMessage, ClaimShares } from '../../../src/store/claims.js';

/** Per-client queues (counts: a message's id is its client and number), claimed by share. */
class Queues {
  readonly #queued = new Map<string, number>();
  #next = 0;

  add(client: string, n: number): void {
    this.#queued.set(client, this.size(client) + n);
  }

  size(client: string): number {
    return this.#queued.get(client) ?? 0;
  }

  /** As the stores walk it (`walkClaim`), clients in name order. */
  claim(take: ClaimShares): ClaimedMessage[] {
    const out: ClaimedMessage[] = [];
    const queued = [...this.#queued].filter(([, n]) => n > 0).map(([client]) => client).sort();
    walkClaim(claimShares(take), queued, (client, limit) => {
      const n = Math.min(this.size(client), limit);
      this.#queued.set(client, this.size(client) - n);
      for (let i = 0; i < n; i++) out.push(message(`${client}-${this.#next++}`, client));
      return n;
    });
    return out;
  }
}

function message(id: string, client: string): ClaimedMessage {
  return {
    id, client, upstream: 'up1', source: 'S', destination: '447700900001', registeredDelivery: 1, sourceTon: 5, sourceNpi: 0,
    destTon: 1, destNpi: 1, validityPeriod: '', parts: [],
  };
}

function fairShare(weights: Record<string, number> = {}): FairShare {
  return new FairShare((c) => weights[c] ?? 1, () => Object.keys(weights));
}

/** The configured clients' weights, and what each has queued. */
function lane(weights: Record<string, number>, queued: Record<string, number>): { fair: FairShare; queues: Queues } {
  const queues = new Queues();
  for (const [client, n] of Object.entries(queued)) queues.add(client, n);
  return { fair: fairShare(weights), queues };
}

/** One claim of `room`: what the binds get, in order, and whether the lane may claim again at once. */
function claimOnce(fair: FairShare, queues: Queues, room: number): { clients: string[]; more: boolean } {
  const plan = fair.plan(room);
  const { ordered, more } = fair.took(plan, queues.claim(plan.shares));
  return { clients: ordered.map((m) => m.client), more };
}

const count = (clients: string[], name: string) => clients.filter((c) => c === name).length;

describe('FairShare', () => {
  it('a busy client alone has the whole room; what no client filled is caught up', () => {
    const { fair, queues } = lane({ acme: 1, globex: 1 }, { acme: 1_000 });
    // First claim after an idle spell: every configured client is offered its share.
    expect(claimOnce(fair, queues, 100)).toEqual({ clients: Array(50).fill('acme'), more: true });
    expect(claimOnce(fair, queues, 100)).toEqual({ clients: Array(100).fill('acme'), more: true });
    const rest = Array.from({ length: 9 }, () => claimOnce(fair, queues, 100));
    expect(rest.map((c) => [c.clients.length, c.more])).toEqual([...Array(8).fill([100, true]), [50, false]]);
  });

  it('a single send of another client goes in the next claim, first, however long the busy client\'s queue', () => {
    const { fair, queues } = lane({ acme: 1, globex: 1 }, { acme: 100_000 });
    claimOnce(fair, queues, 500);
    claimOnce(fair, queues, 500);
    queues.add('globex', 1);
    const next = claimOnce(fair, queues, 10);
    // Within the room: the probe's find is cut from acme's share.
    expect(next.clients).toEqual(['globex', ...Array(9).fill('acme')]);
    expect(queues.size('globex')).toBe(0);
  });

  it('50 clients\' single sends during another\'s backlog: every claim within its room, all found within 50 / room claims', () => {
    const singles = Array.from({ length: 50 }, (_, i) => `single${String(i).padStart(2, '0')}`);
    const { fair, queues } = lane({ acme: 1, ...Object.fromEntries(singles.map((c) => [c, 1])) }, { acme: 100_000 });
    claimOnce(fair, queues, 10);
    claimOnce(fair, queues, 10);
    for (const c of singles) queues.add(c, 1);
    // Five claims of ten probes find the fifty, taking the room from acme (whose share is cut, not run dry).
    const probing = Array.from({ length: 5 }, () => claimOnce(fair, queues, 10));
    expect(probing.flatMap((c) => c.clients).sort()).toEqual(singles);
    for (const c of probing) {
      expect(c.clients).toHaveLength(10);
      expect(c.more).toBe(true);
    }
    // Then each found client is offered a share once and shows it has nothing more, and acme has
    // the whole room again: within about as many claims again, none of them caught up.
    let claims = 0;
    for (let c = claimOnce(fair, queues, 10); ; c = claimOnce(fair, queues, 10)) {
      claims++;
      expect(c.clients.every((client) => client === 'acme')).toBe(true);
      expect(c.more).toBe(true);
      if (c.clients.length === 10) break;
      expect(claims).toBeLessThan(8);
    }
  });

  it('weights: a client of weight 3 has three sent for each one of weight 1 while both have work, in claims large or small', () => {
    for (const room of [1, 4, 7, 500]) {
      const { fair, queues } = lane({ big: 3, small: 1 }, { big: 10_000, small: 10_000 });
      const sent: string[] = [];
      while (sent.length < 4_000) sent.push(...claimOnce(fair, queues, room).clients);
      const window = sent.slice(0, 4_000);
      expect(count(window, 'big') / count(window, 'small'), `room ${room}`).toBeCloseTo(3, 1);
    }
  });

  it('in a claim the messages come in fair order, interleaved by weight', () => {
    const { fair, queues } = lane({ big: 3, small: 1 }, { big: 100, small: 100 });
    claimOnce(fair, queues, 8);
    expect(claimOnce(fair, queues, 8).clients).toEqual(['big', 'big', 'big', 'small', 'big', 'big', 'big', 'small']);
  });

  it('a share left unused goes to the others at once: the lane claims again', () => {
    const { fair, queues } = lane({ acme: 1, globex: 1 }, { acme: 1_000, globex: 1_000 });
    claimOnce(fair, queues, 100);
    // globex has 10 left: it takes them, acme fills its half, the lane goes on.
    const drain = queues.claim({ clients: [{ client: 'globex', limit: 940 }], others: 0 });
    expect(drain).toHaveLength(940);
    const short = claimOnce(fair, queues, 100);
    expect(count(short.clients, 'globex')).toBe(10);
    expect(count(short.clients, 'acme')).toBe(50);
    expect(short.more).toBe(true);
    // globex showed it ran dry: the next claim is acme's, but for a probe of globex.
    const next = claimOnce(fair, queues, 100);
    expect(next.clients).toEqual(Array(100).fill('acme'));
  });

  it('a client that is not configured (removed from the config, its messages still queued) is served, at weight 1', () => {
    const { fair, queues } = lane({ acme: 1 }, { acme: 1_000, gone: 1_000 });
    const first = claimOnce(fair, queues, 100);
    expect(count(first.clients, 'gone')).toBe(PROBE);
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) sent.push(...claimOnce(fair, queues, 100).clients);
    expect(Math.abs(count(sent, 'gone') - 500)).toBeLessThanOrEqual(1);
  });

  it('a busy client given nothing in a small claim keeps the lane claiming', () => {
    const { fair, queues } = lane({ acme: 1, globex: 1 }, { acme: 100, globex: 100 });
    claimOnce(fair, queues, 10);
    const plan = fair.plan(1);
    expect(plan.shares.clients.filter((c) => c.limit > 0)).toHaveLength(1);
    expect(plan.waiting).toBe(true);
  });

  it('weights follow a reload at the next claim', () => {
    const weights: Record<string, number> = { big: 1, small: 1 };
    const fair = new FairShare((c) => weights[c] ?? 1, () => Object.keys(weights));
    const queues = new Queues();
    queues.add('big', 10_000);
    queues.add('small', 10_000);
    claimOnce(fair, queues, 100);
    weights.big = 4;
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(...claimOnce(fair, queues, 100).clients);
    expect(count(sent, 'big') / count(sent, 'small')).toBeCloseTo(4, 0);
  });

  const weightsArb = fc.record({ a: fc.integer({ min: 1, max: 5 }), b: fc.integer({ min: 1, max: 5 }), c: fc.integer({ min: 1, max: 5 }) });
  const rooms = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 150 });

  it('property: clients that always have work are served by weight, within one message of each other at every claim', () => {
    // d sends now and then: it takes turns, never a's, b's or c's from one another.
    fc.assert(fc.property(weightsArb, rooms, fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 150 }), (w, roomSeq, dBursts) => {
      const weightOf = (c: string) => (w as Record<string, number>)[c] ?? 1;
      const fair = new FairShare(weightOf, () => ['a', 'b', 'c']);
      const queues = new Queues();
      for (const c of ['a', 'b', 'c']) queues.add(c, 1_000_000);
      const served = new Map<string, number>();
      roomSeq.forEach((room, i) => {
        queues.add('d', dBursts[i] ?? 0);
        const plan = fair.plan(room);
        const { ordered } = fair.took(plan, queues.claim(plan.shares));
        // Within the room, probes included.
        expect(ordered.length).toBeLessThanOrEqual(room);
        for (const m of ordered) served.set(m.client, (served.get(m.client) ?? 0) + 1);
        const normalized = ['a', 'b', 'c'].map((c) => (served.get(c) ?? 0) / weightOf(c));
        expect(Math.max(...normalized) - Math.min(...normalized)).toBeLessThanOrEqual(1 + 1e-9);
      });
    }), { seed: 0x5eedfa1e, numRuns: 300 });
  });

  it('property: a claim that says the lane caught up left no work behind, and every client with work is served within a few claims', () => {
    const step = fc.record({
      room: fc.integer({ min: 1, max: 40 }),
      arrivals: fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.integer({ min: 0, max: 60 })), { maxLength: 3 }),
    });
    fc.assert(fc.property(weightsArb, fc.array(step, { minLength: 1, maxLength: 150 }), (w, steps) => {
      const weightOf = (c: string) => (w as Record<string, number>)[c] ?? 1;
      const fair = new FairShare(weightOf, () => ['a', 'b', 'c']);
      const queues = new Queues();
      const waited = new Map<string, number>();
      const total = ['a', 'b', 'c', 'd'].reduce((n, c) => n + weightOf(c), 0);
      for (const { room, arrivals } of steps) {
        for (const [c, n] of arrivals) queues.add(c, n);
        const withWork = ['a', 'b', 'c', 'd'].filter((c) => queues.size(c) > 0);
        const plan = fair.plan(room);
        const { ordered, more } = fair.took(plan, queues.claim(plan.shares));
        expect(ordered.length).toBeLessThanOrEqual(room);
        if (!more) for (const c of ['a', 'b', 'c', 'd']) expect(queues.size(c), `${c} left behind`).toBe(0);
        for (const c of withWork) {
          const n = ordered.some((m) => m.client === c) ? 0 : (waited.get(c) ?? 0) + 1;
          waited.set(c, n);
          // Its turn comes once the others' weighted turns of the room are given, and a probe first.
          expect(n, `${c} waited`).toBeLessThanOrEqual(Math.ceil(total / (weightOf(c) * room)) + 2);
        }
      }
    }), { seed: 0x5eedfa1f, numRuns: 300 });
  });
});
