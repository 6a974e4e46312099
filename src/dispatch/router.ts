/**
 * Where a send goes: its route (`RouteTable`) and, within the route, an upstream that can send
 * now. A `failover` route sends to its first available upstream; a `weighted` one spreads its
 * sends over the available ones by weight (smooth weighted round-robin, so the spread is even
 * over any short run, not only on average). With none available a send goes to the route's
 * first upstream and waits in the queue there until it comes back or its parts fail over.
 */
import type { Log } from '../core/log.js';
import type { RouteSpec, RouteTable } from './route-table.js';

export interface Availability {
  available(upstream: string): boolean;
}

export interface RoutingCounters {
  /** A message accepted on `route` for `upstream`. */
  routed(route: string, upstream: string): void;
  /** The route's sends moved from one upstream to another (`to` is 'none' when none is left). */
  routeFailover(route: string, from: string, to: string): void;
}

export const noRoutingCounters: RoutingCounters = { routed: () => {}, routeFailover: () => {} };

/** What `Router.explain` says about a number: its route and the upstream a send would take now. */
export interface RouteChoice {
  route: RouteSpec;
  upstream: string;
  /** The route's upstreams with whether each is available now. */
  upstreams: Array<{ name: string; available: boolean; weight: number }>;
}

export class Router {
  readonly #table: RouteTable;
  readonly #availability: Availability;
  /** Smooth weighted round-robin state per weighted route: each upstream's current weight. */
  readonly #current = new Map<string, Map<string, number>>();

  constructor(table: RouteTable, availability: Availability) {
    this.#table = table;
    this.#availability = availability;
  }

  get table(): RouteTable {
    return this.#table;
  }

  /** The route of `destination` for `client`; undefined: no route (the send is refused NO_ROUTE). */
  route(destination: string, client: string): RouteSpec | undefined {
    return this.#table.match(destination, client);
  }

  /**
   * The upstream a new send on `route` goes to now, among those that can carry it (`carries`: its
   * text within their rules): the first available one, or the next by weight; with none of them
   * available, the first that can carry it (the send waits in its queue). Undefined: none can.
   */
  upstreamFor(route: RouteSpec, carries: (upstream: string) => boolean = () => true): string | undefined {
    return this.#pick(route, (u) => carries(u) && this.#availability.available(u)) ?? route.upstreams.find(carries);
  }

  /**
   * Where parts queued for `from` (which failed over) go on `route`: an available upstream other
   * than `from`, chosen as a new send would be; undefined when there is none.
   */
  failoverTarget(route: RouteSpec, from: string): string | undefined {
    return this.#pick(route, (u) => u !== from && this.#availability.available(u));
  }

  /** The route and the upstream a send of `destination` by `client` would take now. */
  explain(destination: string, client: string): RouteChoice | undefined {
    const route = this.route(destination, client);
    if (!route) return undefined;
    const upstreams = route.upstreams.map((name, i) => ({ name, available: this.#availability.available(name), weight: route.weights[i] ?? 1 }));
    // A weighted route's next pick without moving its rotation.
    const upstream = route.strategy === 'weighted'
      ? (upstreams.filter((u) => u.available).sort((a, b) => b.weight - a.weight)[0]?.name ?? route.upstreams[0]!)
      : (this.upstreamFor(route) ?? route.upstreams[0]!);
    return { route, upstream, upstreams };
  }

  #pick(route: RouteSpec, usable: (upstream: string) => boolean): string | undefined {
    if (route.strategy === 'failover') return route.upstreams.find(usable);
    let current = this.#current.get(route.name);
    if (!current) this.#current.set(route.name, current = new Map<string, number>());
    let best: string | undefined;
    let bestWeight = -Infinity;
    let total = 0;
    route.upstreams.forEach((u, i) => {
      if (!usable(u)) return;
      const weight = route.weights[i] ?? 1;
      total += weight;
      const w = (current.get(u) ?? 0) + weight;
      current.set(u, w);
      if (w > bestWeight) {
        best = u;
        bestWeight = w;
      }
    });
    if (best !== undefined) current.set(best, bestWeight - total);
    return best;
  }
}

/**
 * Tells the operator when a route's sends move: a warning when the upstream a route sends to
 * becomes unavailable and another (or none) takes over, and one when it returns. A route's state
 * is the set of its upstreams that are available; only changes after the route first had one are
 * told, and an upstream available for the first time is no return, so the binds coming up at
 * start-up say nothing, in whichever order they bind.
 */
export class RouteWatch {
  readonly #routes: readonly RouteSpec[];
  readonly #availability: Availability;
  readonly #log: Log;
  readonly #counters: RoutingCounters;
  /** Per route, the upstream a failover route sends to (or the first available of a weighted one); undefined: none yet. */
  readonly #active = new Map<string, string | null>();
  /** Upstreams that have been available since start-up. */
  readonly #seen = new Set<string>();

  constructor(routes: readonly RouteSpec[], availability: Availability, log: Log, counters: RoutingCounters = noRoutingCounters) {
    this.#routes = routes;
    this.#availability = availability;
    this.#log = log;
    this.#counters = counters;
  }

  /** Called on every change of an upstream's availability. */
  changed(upstream: string, available: boolean): void {
    const returning = available && this.#seen.has(upstream);
    if (available) this.#seen.add(upstream);
    for (const route of this.#routes) {
      if (!route.upstreams.includes(upstream)) continue;
      const now = route.upstreams.filter((u) => this.#availability.available(u));
      const before = this.#active.get(route.name);
      const first = now[0] ?? null;
      if (before === undefined) {
        if (first !== null) this.#active.set(route.name, first);
        continue;
      }
      const weighted = route.strategy === 'weighted';
      if (available) {
        // Back: a failover route returns to it when it is ahead of the one in use.
        if (before === null || (!weighted && route.upstreams.indexOf(upstream) < route.upstreams.indexOf(before))) {
          // A route that had none left is told even of an upstream new to it: its error said "none".
          if (returning || before === null) {
            this.#log.warn({ event: 'route_returned', route: route.name, upstream, from: before ?? 'none' }, 'a route sends to its upstream again');
          }
          this.#active.set(route.name, weighted ? first : upstream);
        } else if (weighted && returning) {
          this.#log.warn({ event: 'route_returned', route: route.name, upstream }, 'an upstream of a weighted route takes sends again');
        }
        continue;
      }
      if (!weighted && before !== upstream) continue; // a backup not in use went down: nothing moves
      const to = weighted ? (now.length > 0 ? now.join(',') : 'none') : (first ?? 'none');
      this.#counters.routeFailover(route.name, upstream, first ?? 'none');
      if (first === null) {
        this.#log.error({ event: 'route_failover', route: route.name, from: upstream, to }, 'no upstream of the route can send: its sends wait in the queue');
      } else {
        this.#log.warn({ event: 'route_failover', route: route.name, from: upstream, to }, 'a route fails over: its sends go to another upstream');
      }
      this.#active.set(route.name, first);
    }
  }
}
