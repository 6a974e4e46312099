/**
 * Moves the work of an upstream that has failed over (unavailable for its
 * `failoverAfterSeconds`, or suspended by an operator) to the next available upstream of each message's route. Two steps, each
 * run: the pool gives back the messages waiting for one of its binds that have no part accepted
 * (a part left uncertain by the dropped link among them: `onUncertain: resend` sends it again,
 * now elsewhere), which the dispatcher records as queued; then the store's queued messages of that
 * upstream are composed again for their new upstream (its alphabet, shift tables, long-message
 * mode, part limit, source TON/NPI, receipts) and moved there, every part of a message together.
 * A message with a part already accepted stays: all of a message's parts go through one upstream.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { WarningThrottle } from '../core/warning-throttle.js';
import type { MessageMove, MessageRerouting, MovableMessage } from '../store/rerouting.js';
import { partBodies, type ComposedMessage, type OutgoingMessage } from './compose.js';
import type { RouteSpec } from './route-table.js';
import type { Router } from './router.js';
import type { UpstreamAvailability } from './upstream-availability.js';

export interface FailoverCounters {
  /** Messages moved from one upstream to another. */
  failoverMoved(from: string, to: string, messages: number): void;
}

export interface FailoverOptions {
  store: MessageRerouting;
  pool: { withdrawUnstarted(upstream: string): number };
  availability: UpstreamAvailability;
  router: Router;
  /** `message` composed for `upstream` (the acceptor's composers); throws the compose errors. */
  compose: (upstream: string, message: Omit<OutgoingMessage, 'destination'>) => ComposedMessage;
  /** The upstreams this instance has binds to: only their failures are its to act on. */
  upstreams: readonly string[];
  clock: Clock;
  log: Log;
  warnings: WarningThrottle;
  counters?: FailoverCounters;
  /** After messages moved: the dispatcher claims them from their new upstream. */
  onMoved?: () => void;
  /** How often failed-over upstreams are looked at. Default 1000 ms. */
  everyMs?: number;
  /** Messages read and moved per commit. Default 500. */
  batch?: number;
}

/** Commits of moves per upstream per run, at most: a large backlog moves over several runs, between the hot path's writes. */
const MAX_ROUNDS = 20;

export class Failover {
  readonly #o: FailoverOptions;
  readonly #task: RepeatingTask;
  readonly #batch: number;
  /** Per upstream, the seq the next read of its queue starts after (absent: from the head). */
  readonly #cursor = new Map<string, number>();

  constructor(o: FailoverOptions) {
    this.#o = o;
    this.#batch = o.batch ?? 500;
    this.#task = new RepeatingTask({
      clock: o.clock, everyMs: o.everyMs ?? 1_000, run: () => this.run(),
      onError: (e) => o.log.error({ event: 'store_error', err: e }, 'moving the queued messages of an unavailable upstream failed; retrying'),
    });
  }

  start(): void {
    this.#task.start(this.#o.everyMs ?? 1_000);
  }

  /** Resolves when the run under way (if any) is over. */
  stop(): Promise<void> {
    return this.#task.stop();
  }

  /** A pass now (or right after the one under way): an upstream was just suspended. */
  runNow(): void {
    this.#task.runNow();
  }

  /** One pass over the upstreams that failed over (the task's run; tests call it directly). */
  async run(): Promise<void> {
    for (const upstream of this.#o.upstreams) {
      if (!this.#o.availability.failedOver(upstream)) {
        this.#cursor.delete(upstream);
        continue;
      }
      // Nowhere to go: the pool keeps what it holds (with the attempts it counts) for its return;
      // but a suspended upstream takes nothing new, so what it holds goes back to the queue to wait.
      const alternative = this.#hasAlternative(upstream);
      if (!alternative && !this.#o.availability.isSuspended(upstream)) continue;
      const withdrawn = this.#o.pool.withdrawUnstarted(upstream);
      if (withdrawn > 0) {
        this.#o.log.info({ event: 'failover_withdrawn', upstream, messages: withdrawn }, 'messages waiting for a bind of an unavailable upstream go back to the queue to move');
      }
      if (alternative) await this.#moveQueued(upstream);
    }
  }

  /** Whether a route through `upstream` has another upstream available now. */
  #hasAlternative(upstream: string): boolean {
    return this.#o.router.table.routes.some((r) => r.upstreams.includes(upstream) && r.upstreams.some((u) => u !== upstream && this.#o.availability.available(u)));
  }

  /**
   * Moves what it can of `from`'s queue, a batch a commit, at most MAX_ROUNDS commits a run. The
   * next run reads on from where this one stopped (from the head again once a read reached the
   * end), so messages left where they are (no other upstream on their route, a text the other
   * upstream cannot carry) never hold back those behind them, however many they are.
   */
  async #moveQueued(from: string): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const after = this.#cursor.get(from) ?? 0;
      const movable = await this.#o.store.movable(from, this.#batch, this.#o.clock.wallNow(), after);
      if (movable.length < this.#batch) this.#cursor.delete(from);
      else this.#cursor.set(from, movable.at(-1)!.seq);
      const moves = movable.flatMap((m) => this.#moveOf(m, from));
      if (moves.length > 0) {
        const moved = new Set(await this.#o.store.move(moves, this.#o.clock.wallNow()));
        const perTarget = new Map<string, number>();
        for (const m of moves) if (moved.has(m.id)) perTarget.set(m.upstream, (perTarget.get(m.upstream) ?? 0) + 1);
        for (const [to, messages] of perTarget) {
          this.#o.counters?.failoverMoved(from, to, messages);
          this.#o.log.info({ event: 'failover_moved', from, to, messages }, 'queued messages of an unavailable upstream moved to the next upstream of their route');
        }
        if (moved.size > 0) this.#o.onMoved?.();
      }
      if (movable.length < this.#batch) return;
    }
  }

  /** The move of one message, or none: its route has no other upstream available, or the text does not fit the one it has. */
  #moveOf(m: MovableMessage, from: string): MessageMove[] {
    const route = this.#routeOf(m);
    if (!route) {
      this.#o.warnings.warn(this.#o.log, `failover_no_route@${from}`, { event: 'failover_no_route', upstream: from, messageId: m.id },
        'a queued message of an unavailable upstream matches no route now; it stays where it is');
      return [];
    }
    const to = this.#o.router.failoverTarget(route, from);
    if (to === undefined) return [];
    let composed: ComposedMessage;
    try {
      composed = this.#o.compose(to, {
        source: m.source, text: m.text, messageType: m.messageType, ...(m.regulatory !== undefined ? { regulatory: m.regulatory } : {}),
      });
    } catch (e) {
      this.#o.warnings.warn(this.#o.log, `failover_not_composable@${to}`, { event: 'failover_not_composable', from, to, messageId: m.id, error: e instanceof Error ? e.message : String(e) },
        'a queued message cannot be sent through the upstream its route fails over to (its text rules, or regulatory ids it requires); it stays where it is');
      return [];
    }
    const first = composed.parts[0]!;
    return [{
      id: m.id, from, upstream: to, encoding: composed.encoding,
      registeredDelivery: first.registeredDelivery, sourceTon: first.sourceAddrTon, sourceNpi: first.sourceAddrNpi,
      ...(composed.vendorTlvs.length > 0 ? { vendorTlvs: composed.vendorTlvs } : {}),
      parts: partBodies(composed),
    }];
  }

  /** The route it was accepted on while the configuration has it, else the one it would take now. */
  #routeOf(m: MovableMessage): RouteSpec | undefined {
    return (m.route !== null ? this.#o.router.table.byName(m.route) : undefined) ?? this.#o.router.route(m.destination, m.client);
  }
}
