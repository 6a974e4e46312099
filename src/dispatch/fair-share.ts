/**
 * Fair sharing of one upstream's binds between clients (weighted fair queuing over the claims):
 * each claim's room is divided between the clients that have ready messages, in proportion to
 * their weights, so a client's single send never waits behind another client's backlog, and a
 * client of weight 3 gets three messages sent for each one of a client of weight 1 while both
 * have work. A share a client leaves unused (it has fewer ready messages) goes to the others in
 * the next claim of the same fill.
 *
 * Each client has a virtual finish time: 1/weight for every message it was given. The room of a
 * claim goes message by message to the client whose next message would finish first; a client
 * that comes back after having nothing to send starts at the virtual time of the busiest
 * clients, so it neither saves up turns while idle nor waits for the others' past. Pure: the
 * dispatcher calls `plan` before a claim and `took` with what the claim returned.
 */
import { MinHeap } from '../core/min-heap.js';
import type { ClaimedMessage, ClaimShares } from '../store/claims.js';

/**
 * What a client that showed no more ready messages (or one never seen) may take in a claim while
 * others are busy: enough to find it has work again. It then has its full share from the next
 * claim on. What the probes find counts against the claim's room (`ClaimShares.max`): the store
 * walks them first and cuts the busy clients' shares by as much, so a claim never takes more than
 * its room, however many clients there are.
 */
export const PROBE = 1;

/** A client's weight when none is configured (a client no longer in the config, say). */
export const DEFAULT_WEIGHT = 1;

interface ClientTurns {
  /** Virtual time at which the last message given to it finishes. */
  finish: number;
  /** It filled its last share: it may have more ready. */
  busy: boolean;
}

/** One claim's shares, and what `took` needs to settle them. */
export interface ClaimPlan {
  shares: ClaimShares;
  /** Virtual start time of each client given a share of the room in this claim (the others are probed). */
  readonly starts: ReadonlyMap<string, number>;
  /** Clients listed without a message in this claim (the room was short): there may be more to claim. */
  readonly waiting: boolean;
}

export class FairShare {
  readonly #clients = new Map<string, ClientTurns>();
  /** Virtual time: the least finish among the busy clients after the last claim. */
  #now = 0;

  /**
   * @param weightOf A client's weight (> 0): its share against the others'. Read at each claim, so a reload applies at once.
   * @param configured The clients the configuration names: after an idle spell each is offered a share at once.
   */
  constructor(private readonly weightOf: (client: string) => number, private readonly configured: () => Iterable<string>) {}

  /** How the next claim, of `room` messages (≥ 1), is divided. */
  plan(room: number): ClaimPlan {
    let busy = [...this.#clients].filter(([, t]) => t.busy).map(([name]) => name);
    // Nobody known to be busy (a start, or after every client ran dry): each client, configured or
    // seen, is offered its share of the room; those with nothing to send turn idle after this claim.
    if (busy.length === 0) busy = [...new Set([...this.configured(), ...this.#clients.keys()])];
    const starts = new Map(busy.map((name) => [name, Math.max(this.#clients.get(name)?.finish ?? 0, this.#now)]));
    const limits = this.#divide(room, starts);
    // Listed in the order of their last message's turn: what the probes find is cut from the
    // end of the list, the latest turns of the room first.
    const clients = busy.filter((client) => !limits.has(client)).map((client) => ({ client, limit: 0 }));
    // A client listed without a message (busy, or offered a share after an idle spell) may have some.
    const waiting = clients.length > 0;
    for (const [client, limit] of limits) clients.push({ client, limit });
    // Every other client, idle or never seen, is probed, within the room.
    return { shares: { clients, others: PROBE, max: room }, starts, waiting };
  }

  /**
   * Settles a claim made with `plan.shares`: each client's virtual time moves on by what it got.
   * Returns the claimed messages in the order the binds should send them: what the probes found
   * first (a message each at most: a single send waits for no one's backlog), then by virtual
   * finish time. And whether more may be ready (a client filled its share, or was listed without
   * one, or the claim took its whole room): when not, the lane has caught up.
   */
  took(plan: ClaimPlan, claimed: readonly ClaimedMessage[]): { ordered: readonly ClaimedMessage[]; more: boolean } {
    const got = new Map<string, number>();
    for (const m of claimed) got.set(m.client, (got.get(m.client) ?? 0) + 1);
    let more = plan.waiting;
    const found: Array<{ client: string; n: number; filled: boolean }> = [];
    /** `asked`: what the claim could take of it; it filled that, so it may have more. */
    const settle = (client: string, asked: number): void => {
      const n = got.get(client) ?? 0;
      const filled = n >= asked;
      more ||= filled;
      if (plan.starts.has(client)) this.#clients.set(client, { finish: plan.starts.get(client)! + n / this.#weight(client), busy: filled });
      else found.push({ client, n, filled });
    };
    const listed = new Set(plan.shares.clients.map((c) => c.client));
    // Clients the plan did not know took at most `others` each, before the listed ones (`ClaimShares.max`).
    let left = plan.shares.max ?? Infinity;
    for (const [client, n] of got) {
      if (listed.has(client)) continue;
      settle(client, plan.shares.others);
      left -= n;
    }
    // Each listed client in turn could take its share, or what the room had left of it when its turn came.
    for (const { client, limit } of plan.shares.clients) {
      if (limit > 0) {
        settle(client, Math.min(limit, Math.max(0, left)));
        left -= got.get(client) ?? 0;
      } else if (!this.#clients.has(client)) {
        // Offered a share after an idle spell, but the room was short: its turn is the next claim's.
        this.#clients.set(client, { finish: plan.starts.get(client)!, busy: true });
      }
    }
    this.#advance();
    // What a probe found starts at the busy clients' time after this claim: it is served from the
    // next claim on as one of them, without catching up on turns it was not known to want.
    for (const f of found) {
      const start = Math.max(this.#clients.get(f.client)?.finish ?? 0, this.#now);
      this.#clients.set(f.client, { finish: start + f.n / this.#weight(f.client), busy: f.filled });
    }
    this.#advance();
    // One client's messages (the usual claim) are in their fair order already: the store's, by age.
    if (got.size <= 1) return { ordered: claimed, more };
    const first = new Set(found.map((f) => f.client));
    return { ordered: fairOrder(claimed, plan.starts, first, (c) => this.#weight(c)), more };
  }

  /** Virtual time follows the busy clients; clients no further along are forgotten (they would start there anyway). */
  #advance(): void {
    let least = Infinity;
    for (const t of this.#clients.values()) if (t.busy && t.finish < least) least = t.finish;
    if (least === Infinity) {
      // Every client ran dry: the next busy spell starts from nothing.
      this.#clients.clear();
      this.#now = 0;
      return;
    }
    this.#now = Math.max(this.#now, least);
    for (const [name, t] of this.#clients) if (!t.busy && t.finish <= this.#now) this.#clients.delete(name);
  }

  #weight(client: string): number {
    const w = this.weightOf(client);
    return w > 0 && Number.isFinite(w) ? w : DEFAULT_WEIGHT;
  }

  /**
   * `room` messages, one at a time, each to the client whose next message finishes first (ties:
   * by name). The clients given any, in the order of the turn of their last one.
   */
  #divide(room: number, starts: ReadonlyMap<string, number>): Map<string, number> {
    // One client (the usual case): all of it, without the turns.
    if (starts.size === 1) return new Map([...starts.keys()].map((client) => [client, room]));
    const heap = new MinHeap<Turn>(finishesFirst);
    for (const [client, start] of starts) {
      const step = 1 / this.#weight(client);
      heap.push({ client, step, next: start + step, count: 0 });
    }
    const limits = new Map<string, number>();
    for (let i = 0; i < room && heap.size > 0; i++) {
      const top = heap.pop()!;
      top.count++;
      top.next += top.step;
      limits.delete(top.client);
      limits.set(top.client, top.count);
      heap.push(top);
    }
    return limits;
  }
}

/**
 * Claimed messages, those of the `first` clients first, then by virtual finish time: a client's
 * n-th message finishes at its start + n / weight.
 */
function fairOrder(claimed: readonly ClaimedMessage[], starts: ReadonlyMap<string, number>, first: ReadonlySet<string>, weight: (client: string) => number): ClaimedMessage[] {
  const seen = new Map<string, number>();
  const tagged = claimed.map((m, i) => {
    const n = (seen.get(m.client) ?? 0) + 1;
    seen.set(m.client, n);
    return { m, i, first: first.has(m.client), finish: (starts.get(m.client) ?? 0) + n / weight(m.client) };
  });
  tagged.sort((a, b) => Number(b.first) - Number(a.first) || (a.first ? 0 : a.finish - b.finish) || compareNames(a.m.client, b.m.client) || a.i - b.i);
  return tagged.map((t) => t.m);
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface Turn {
  client: string;
  step: number;
  next: number;
  count: number;
}

/** By next finish time, then client name. */
function finishesFirst(a: Turn, b: Turn): boolean {
  return a.next < b.next || (a.next === b.next && a.client < b.client);
}
