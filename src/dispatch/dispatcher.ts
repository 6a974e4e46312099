/**
 * Moves ready messages from the store to the bind pool and records what became of each part.
 * The store decides what is ready (batch active, schedule released, not expired, retry time
 * passed) and marks it inflight in the same commit, so a restart knows what was handed over;
 * the pool sends each message's parts in order and retries transient codes; this loop keeps the
 * pool fed without overfilling it, and stores what became of the parts (`outcome-recorder.ts`). A single send
 * accepted while its lane is caught up and has room skips the claim (`admit`): a store that
 * `claimsOnAccept` commits it inflight, and the acceptor hands it over here.
 */
import type { Clock, TimerHandle } from '../core/clock.js';
import { ErrorCode, isSmppdError } from '../core/errors.js';
import type { Log } from '../core/log.js';
import { WarningThrottle } from '../core/warning-throttle.js';
import type { MessageOutcome, StorePart, SubmitPart } from '../smpp/part-outcome.js';
import type { ClaimedMessage, SubmitClaims } from '../store/claims.js';
import { BatchTurns } from './batch-turns.js';
import { DEFAULT_WEIGHT, FairShare } from './fair-share.js';
import { InflightRecovery } from './inflight-recovery.js';
import { OutcomeRecorder, submitParts } from './outcome-recorder.js';

/**
 * How one accepted message reaches the pool, decided before its accept (`Dispatcher.admit`).
 * `direct`: the lane has room and nothing older waits in the queue, so the message is stored
 * claimed (`AcceptRequest.claimed`) and handed over after its commit, without a claim; else it
 * is stored queued and claimed as usual. Either way `handOver` or `done` is called once.
 */
export interface Admission {
  readonly direct: boolean;
  /** After the commit of a direct accept: the message goes to the pool. */
  handOver(message: ClaimedMessage): void;
  /** The accept is over without a hand-over: it failed, or its message was stored queued. */
  done(): void;
}

/** The part of the bind pool the dispatcher uses (the real `Pool`, or a test double). */
export interface SubmitTarget {
  accepting(upstream: string): boolean;
  /** `storePart` stores accepted parts as they come; the outcome's `release` is called once it is recorded (or its record failed). */
  submit(upstream: string, parts: SubmitPart[], priorAttempts?: number, storePart?: StorePart): Promise<MessageOutcome>;
  onDrain(listener: (upstream: string) => void): () => void;
}

export interface DispatcherUpstream {
  name: string;
  /**
   * Messages handed to the pool and not yet answered, at most: enough to keep every window full.
   * Twice as many may have been handed over without their outcomes recorded (those in the pool
   * included).
   */
  maxInPool: number;
  onUncertain: 'resend' | 'fail';
}

export interface DispatchCounters {
  /** A message handed to the pool: from a claim, or from its accept (`admit`). */
  dispatched(upstream: string, via: 'claim' | 'accept'): void;
}

const noCounters: DispatchCounters = { dispatched: () => {} };

/** Stored queued and claimed as usual: nothing to hand over, nothing to give back. */
const QUEUED: Admission = { direct: false, handOver: () => {}, done: () => {} };

export interface DispatcherOptions {
  store: SubmitClaims;
  pool: SubmitTarget;
  upstreams: DispatcherUpstream[];
  clock: Clock;
  log: Log;
  /** How often schedules, expiry and retry times are looked at when nothing wakes the loop. Default 250 ms. */
  pollMs?: number;
  /** Messages claimed per store round trip. Default 500. */
  claimBatch?: number;
  counters?: DispatchCounters;
  /**
   * Warnings about parts the SMSC left uncertain, once per kind per interval; its owner closes it.
   * Default: the dispatcher's own, closed by `stop`.
   */
  warnings?: WarningThrottle;
  /**
   * The configured clients and their weights (> 0; `clients[].weight`), for fair sharing of each
   * upstream's binds between clients. A client not listed (no longer configured) has weight 1.
   * Default: none. `setClients` replaces them.
   */
  clients?: ReadonlyArray<ClientWeight>;
  /**
   * Whether an upstream takes work now: an upstream that failed over (no bind up for its
   * `failoverAfterSeconds`) is handed nothing, its queued messages move to another. Call `wake`
   * when one takes work again. Default: every upstream does.
   */
  usable?: (upstream: string) => boolean;
}

/** A client's share of the binds against the others' while both have messages ready. */
export interface ClientWeight {
  name: string;
  /** > 0. */
  weight: number;
}

/** Outcomes awaiting their record, at most, per message the pool may hold. */
const UNRECORDED_PER_IN_POOL = 2;

interface Lane {
  upstream: DispatcherUpstream;
  /** Handed to the pool, its outcome not yet back (admitted direct sends included). */
  inPool: number;
  /** Handed to the pool, its outcome not yet recorded in the store. */
  unrecorded: number;
  running: boolean;
  again: boolean;
  /**
   * The last claim found fewer ready messages than it asked for, and since then no claim was
   * cut short (by the room or the pool) and no message was admitted to the queue: a new message
   * may go straight to the pool without overtaking a backlog.
   */
  caughtUp: boolean;
  /** How the lane's claims divide their room between clients. */
  fair: FairShare;
}

export class Dispatcher {
  readonly #o: Required<Omit<DispatcherOptions, 'upstreams' | 'warnings' | 'clients'>>;
  readonly #warnings: WarningThrottle;
  readonly #ownWarnings: boolean;
  readonly #lanes: Map<string, Lane>;
  #weights: ReadonlyMap<string, number>;
  readonly #settling = new Set<Promise<void>>();
  /** Direct admissions whose accept is under way: each ends in a hand-over or in nothing. */
  readonly #admitted = new Set<Promise<void>>();
  /** Claims under way (`#fill`): what they take is handed over before `stop` resolves. */
  readonly #filling = new Set<Promise<void>>();
  #timer: TimerHandle | undefined;
  /** Parts left in flight: this instance's at start, a gone instance's while running. */
  readonly #recovery: InflightRecovery;
  readonly #turns: BatchTurns;
  readonly #outcomes: OutcomeRecorder;
  #requeuedAtStop = 0;
  #unsubscribe: (() => void) | undefined;
  #stopped = true;

  constructor(o: DispatcherOptions) {
    const { warnings, clients = [], ...rest } = o;
    this.#o = { pollMs: 250, claimBatch: 500, counters: noCounters, usable: () => true, ...rest };
    this.#ownWarnings = warnings === undefined;
    this.#warnings = warnings ?? new WarningThrottle(o.clock);
    this.#outcomes = new OutcomeRecorder(o.store, o.clock, o.log, this.#warnings);
    this.#weights = weightsOf(clients);
    const weightOf = (client: string): number => this.#weights.get(client) ?? DEFAULT_WEIGHT;
    const configured = (): Iterable<string> => this.#weights.keys();
    this.#lanes = new Map(o.upstreams.map((u) => [u.name, {
      upstream: u, inPool: 0, unrecorded: 0, running: false, again: false, caughtUp: false, fair: new FairShare(weightOf, configured),
    }]));
    this.#recovery = new InflightRecovery({ store: o.store, clock: o.clock, log: o.log, policies: () => this.#policies(), onRecovered: () => this.wake() });
    this.#turns = new BatchTurns(o.store, o.clock, o.log, () => this.wake());
  }

  /** SIGHUP: the clients and weights of the next claims (what each lane has counted so far stays). */
  setClients(clients: ReadonlyArray<ClientWeight>): void {
    this.#weights = weightsOf(clients);
  }

  /** Recovers what a crash left inflight (per the uncertain policy), then starts the loop. */
  async start(): Promise<void> {
    await this.#recovery.start();
    this.#stopped = false;
    this.#unsubscribe = this.#o.pool.onDrain((name) => this.#kick(name));
    this.#tick();
  }

  #policies(): Record<string, 'resend' | 'fail'> {
    return Object.fromEntries([...this.#lanes].map(([name, lane]) => [name, lane.upstream.onUncertain]));
  }

  /** Wakes the loop at once (after an accept, say) instead of at the next poll. */
  wake(): void {
    for (const name of this.#lanes.keys()) this.#kick(name);
  }

  /**
   * Stops claiming and admitting; resolves when the claims and direct accepts under way are over
   * and every message handed to the pool has its outcome recorded (a hand-over after the pool
   * stopped is requeued).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#turns.stop();
    this.#unsubscribe?.();
    while (this.#settling.size > 0 || this.#admitted.size > 0 || this.#filling.size > 0) {
      await Promise.all([...this.#filling, ...this.#admitted, ...this.#settling]);
    }
    // Last: this instance's leases are renewed while the pool drains.
    await this.#recovery.stop();
    if (this.#ownWarnings) this.#warnings.close();
    if (this.#requeuedAtStop > 0) {
      this.#o.log.info({ event: 'requeued_at_stop', messages: this.#requeuedAtStop }, 'messages the stopping pool did not take are back in the queue for the next start');
    }
  }

  /**
   * How a message of `upstream` about to be accepted reaches the pool (`Admission`). Direct
   * when the lane is caught up and has room, which is then the message's until `handOver` or
   * `done`; else queued, and the lane is no longer caught up: the next claim takes the queue.
   */
  admit(upstream: string): Admission {
    const lane = this.#lanes.get(upstream);
    if (lane === undefined) return QUEUED;
    if (!this.#stopped && lane.caughtUp && roomOf(lane) > 0 && this.#o.pool.accepting(upstream) && this.#o.usable(upstream)) {
      lane.inPool++;
      lane.unrecorded++;
      let end!: () => void;
      const pending = new Promise<void>((resolve) => { end = resolve; });
      this.#admitted.add(pending);
      // Once only: the first of handOver and done gives the room back and ends the admission.
      const finish = (): boolean => {
        if (!this.#admitted.delete(pending)) return false;
        lane.inPool--;
        lane.unrecorded--;
        end();
        return true;
      };
      return {
        direct: true,
        handOver: (m) => {
          if (!finish()) return;
          this.#o.counters.dispatched(upstream, 'accept');
          this.#handOver(lane, m);
        },
        done: () => {
          if (finish()) this.#kick(upstream);
        },
      };
    }
    // Queued after the others: the next claim takes them in order, this one too (its accept
    // wakes the dispatcher after the commit).
    lane.caughtUp = false;
    return QUEUED;
  }

  /** Messages handed to the pool and not yet answered, per upstream (for metrics). */
  inPool(upstream: string): number {
    return this.#lanes.get(upstream)?.inPool ?? 0;
  }

  #tick(): void {
    if (this.#stopped) return;
    const now = this.#o.clock.wallNow();
    void Promise.all([this.#o.store.releaseDue(now), this.#o.store.expire(now)])
      .catch((e: unknown) => this.#o.log.error({ event: 'store_error', err: e }, 'releasing schedules or expiring messages failed'))
      .finally(() => this.wake());
    this.#turns.run();
    this.#timer = this.#o.clock.setTimer(this.#o.pollMs, () => this.#tick());
  }

  #kick(name: string): void {
    const lane = this.#lanes.get(name);
    if (!lane || this.#stopped) return;
    if (lane.running) {
      lane.again = true;
      return;
    }
    lane.running = true;
    const filling: Promise<void> = this.#fill(lane).finally(() => {
      this.#filling.delete(filling);
      lane.running = false;
      if (lane.again) {
        lane.again = false;
        this.#kick(name);
      }
    });
    this.#filling.add(filling);
  }

  /** Claims and hands over until the pool is full or nothing is ready. */
  async #fill(lane: Lane): Promise<void> {
    const { store, pool, clock, log, claimBatch } = this.#o;
    const name = lane.upstream.name;
    // Every way out but a short claim may leave ready messages behind: the lane is not caught
    // up then, and the next settled message or wake-up claims again.
    for (;;) {
      const room = roomOf(lane);
      if (this.#stopped || !pool.accepting(name) || room <= 0 || !this.#o.usable(name)) {
        lane.caughtUp = false;
        return;
      }
      const plan = lane.fair.plan(Math.min(room, claimBatch));
      let claimed: ClaimedMessage[];
      try {
        claimed = await store.claim(name, clock.wallNow(), plan.shares);
      } catch (e) {
        lane.caughtUp = false;
        log.error({ event: 'store_error', upstream: name, err: e }, 'claiming ready messages failed; retrying at the next poll');
        return;
      }
      const { ordered, more } = lane.fair.took(plan, claimed);
      for (const m of ordered) {
        this.#o.counters.dispatched(name, 'claim');
        this.#handOver(lane, m);
      }
      // Short (no client filled its share): caught up. A queued accept that commits after this
      // claim's snapshot is not in it: its wake-up claims it next, after the direct sends of
      // those few milliseconds. (Asking for no queued accept under way never caught up again
      // under a steady stream.)
      lane.caughtUp = !more;
      if (lane.caughtUp) return;
    }
  }

  #handOver(lane: Lane, m: ClaimedMessage): void {
    lane.inPool++;
    lane.unrecorded++;
    // The pool is done with the message (one of the two callbacks below): room for the next,
    // while its outcome is being recorded.
    const leftPool = (): void => {
      lane.inPool--;
      this.#kickIfWaiting(lane);
    };
    // The pool counts on from the attempts a part already had (a failover's): maxAttempts is overall.
    // Each part the SMSC accepts keeps its window slot until its outcome is stored, an earlier part
    // of a long message on its own as soon as it is accepted: a crash leaves no more sent and
    // unrecorded (resent at the next start) than the windows hold, and no accepted part of a
    // message it cut short is sent again.
    const recording = this.#outcomes.of(m);
    const settled = this.#o.pool.submit(m.upstream, submitParts(m), m.parts[0]?.attempts ?? 0, recording.storePart)
      .then(async (outcome) => {
        leftPool();
        try { await recording.record(outcome.parts); } finally { outcome.release?.(); }
      }, (e: unknown) => {
        leftPool();
        // The pool refused the whole message (queue full, stopped): it goes back to the queue.
        // While stopping that is expected for every message still waiting: counted, said once.
        if (isSmppdError(e, ErrorCode.POOL_STOPPED)) this.#requeuedAtStop++;
        else this.#o.log.warn({ event: 'submit_refused', upstream: m.upstream, messageId: m.id, err: e }, 'the pool refused a message; requeued');
        const now = this.#o.clock.wallNow();
        return this.#o.store.recordSubmit(m.id, m.parts.map((p) => ({ part: p.part, kind: 'requeue', notBefore: now + 1_000 })), now);
      })
      .catch((e: unknown) => {
        // The outcome could not be stored: the parts stay inflight and a restart applies onUncertain.
        this.#o.log.error({ event: 'store_error', messageId: m.id, err: e }, 'recording a submit outcome failed');
      })
      .finally(() => {
        const wasFull = lane.unrecorded >= maxUnrecorded(lane);
        lane.unrecorded--;
        this.#settling.delete(settled);
        if (wasFull) this.#kickIfWaiting(lane);
      });
    this.#settling.add(settled);
  }

  /**
   * Room for a claim, unless nothing waits: a caught-up lane's new messages come straight from
   * their accepts (a store that claims at accept), or wake it; what becomes ready later (a
   * retry, a schedule) the poll claims.
   */
  #kickIfWaiting(lane: Lane): void {
    if (!lane.caughtUp || this.#o.store.claimsOnAccept !== true) this.#kick(lane.upstream.name);
  }
}

/**
 * Messages the lane may still take. The pool holds at most `maxInPool`, enough to keep every
 * window full. A message leaves it at its outcome, not at the outcome's commit: holding the room
 * until the commit, on a busy machine, left most of it to messages already answered, and most
 * new sends were queued and claimed instead of going direct. The messages handed over and not yet
 * recorded (those in the pool included) are bounded too, at twice `maxInPool` (more went no
 * faster), so that a slow store slows the sending instead of piling up outcomes that a crash
 * would leave uncertain (`onUncertain`). Neither bound is strict while a claim runs: it asks for
 * the room it saw at its start, and direct sends admitted meanwhile take the same room (reserving
 * the claim's room instead sent many direct sends to the queue, for no gain in rate).
 */
function roomOf(lane: Lane): number {
  return Math.min(lane.upstream.maxInPool - lane.inPool, maxUnrecorded(lane) - lane.unrecorded);
}

function maxUnrecorded(lane: Lane): number {
  return lane.upstream.maxInPool * UNRECORDED_PER_IN_POOL;
}

function weightsOf(clients: ReadonlyArray<ClientWeight>): ReadonlyMap<string, number> {
  return new Map(clients.map((c) => [c.name, c.weight]));
}
