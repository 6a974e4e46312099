/**
 * The schema of `routes`: which upstreams a destination number (and a client) is sent over, and
 * how a route spreads its sends over them. The rules that need the whole file (upstream and
 * client names, one route per prefix and client set, unique names) are in `routeProblems`, which
 * the configuration's schema runs; `resolveRoutes` gives the routes the daemon uses.
 *
 * Messages quote a prefix (a number's first digits are no secret) and nothing else.
 */
import { z } from 'zod';
import { nonEmpty, oneOf, positive, typeMessage } from './schema-parts.js';

/** How a route picks among its available upstreams. */
export const ROUTE_STRATEGIES = ['failover', 'weighted'] as const;
export type RouteStrategy = (typeof ROUTE_STRATEGIES)[number];

/** One route, resolved: name derived when not given, prefixes a list, weights filled in. */
export interface RouteConfig {
  /** 1–64 of A-Z a-z 0-9 _ . - , * @; unique among routes. A metric label and in logs. */
  name: string;
  /** Digits only, at most 15 (E.164); '' matches any number. At least one. */
  prefixes: string[];
  /** Upstream names, at least one, no repeats; first preferred. */
  upstreams: string[];
  /** Absent: the route applies to every client. */
  clients?: string[];
  /** failover: the first available upstream; weighted: the available ones by weight. Default failover. */
  strategy: RouteStrategy;
  /** One per upstream, each > 0 (finite number); always present after parsing: with failover, all 1; with weighted and no weights given, all 1. */
  weights: number[];
}

/** The name of the route that stands in when the file has no `routes`. */
export const DEFAULT_ROUTE_NAME = 'default';

const ROUTE_NAME = /^[A-Za-z0-9_.,*@-]{1,64}$/;
const NAME_MAX = 64;
/** E.164 §6: a number is at most 15 digits, so a longer prefix could match none. */
/** Numbers carry their country code (no leading 0, as the API checks them): a prefix starting with 0 matches none. */
const PREFIX = /^(?:[1-9]\d{0,14})?$/;
const PREFIX_MESSAGE = 'must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)';

const prefixSchema = z.string({ error: typeMessage('a string') }).regex(PREFIX, { error: PREFIX_MESSAGE });

/** A list of names (upstreams or clients), at least one. */
function names(what: string, empty: string) {
  return z.array(nonEmpty(), { error: typeMessage(`a list of ${what} names`) }).min(1, { error: empty });
}

/** One entry of `routes` as written: `prefix` a string or a list, `name` and `weights` optional. */
export const routeSchema = z.strictObject({
  /** 1–64 of A-Z a-z 0-9 _ . - , * @. Default: the prefixes joined by "," ("" as "*"), then "@" and the clients joined by ",". */
  name: z.string({ error: typeMessage('a string') }).regex(ROUTE_NAME, { error: 'must be 1–64 letters, digits, _ . - , * or @' }).optional(),
  /** Required. A prefix or a list of them; digits only, at most 15; "" matches any number. */
  prefix: z.union([prefixSchema, z.array(prefixSchema).min(1, { error: 'must list at least one prefix ("" matches any number)' })], {
    error: (issue) => {
      if (issue.input === undefined || issue.input === null) return 'is required';
      const quote = typeof issue.input === 'number' ? ': put it in quotes' : '';
      return `must be a string of digits or a list of them, e.g. "44" or ["447", "4420"]${quote}`;
    },
  }),
  /** Required. Upstream names, at least one, each once; the first is preferred. */
  upstreams: names('upstream', 'must list at least one upstream'),
  /** The clients (names) the route is for. Default: every client. */
  clients: names('client', 'must list at least one client; leave clients out for every client').optional(),
  /** Default failover. */
  strategy: oneOf(ROUTE_STRATEGIES).default('failover'),
  /** Only with strategy weighted: one per upstream, each > 0. Default: all 1. */
  weights: z.array(positive(), { error: typeMessage('a list of numbers') }).optional(),
}, { error: 'must be a mapping { prefix, upstreams, clients, strategy, weights, name }' }).superRefine((r, ctx) => {
  const prefixes = typeof r.prefix === 'string' ? [r.prefix] : r.prefix;
  repeats(prefixes).forEach(([j]) => ctx.addIssue({ code: 'custom', path: ['prefix', j], message: `"${prefixes[j]}" is listed twice` }));
  repeats(r.upstreams).forEach(([j, first]) => ctx.addIssue({ code: 'custom', path: ['upstreams', j], message: `duplicates upstreams[${first}]` }));
  repeats(r.clients ?? []).forEach(([j, first]) => ctx.addIssue({ code: 'custom', path: ['clients', j], message: `duplicates clients[${first}]` }));
  if (r.weights !== undefined) {
    if (r.strategy !== 'weighted') ctx.addIssue({ code: 'custom', path: ['weights'], message: 'only with strategy weighted' });
    else if (r.weights.length !== r.upstreams.length) {
      ctx.addIssue({ code: 'custom', path: ['weights'], message: `must have one weight per upstream (${r.upstreams.length}), has ${r.weights.length}` });
    }
  }
  if (r.name === undefined && routeName(prefixes, r.clients).length > NAME_MAX) {
    ctx.addIssue({ code: 'custom', path: ['name'], message: `is required when the name made of the prefixes and clients would be longer than ${NAME_MAX} characters` });
  }
});

export type ParsedRoute = z.output<typeof routeSchema>;

const EMPTY_ROUTES = 'must list at least one route (leave routes out to send every number over every upstream)';

/** `routes`: absent (every upstream, one failover route) or at least one route. `routes:` with nothing after it is YAML null: empty too. */
export const routesSchema = z.array(routeSchema, {
  error: (issue) => issue.input === null ? EMPTY_ROUTES : typeMessage('a list of routes')(issue),
}).min(1, { error: EMPTY_ROUTES }).optional();

/** The default name of a route: `44`, `49,33@shop`, `*`. */
export function routeName(prefixes: readonly string[], clients?: readonly string[]): string {
  const numbers = prefixes.map((p) => (p === '' ? '*' : p)).join(',');
  return clients === undefined ? numbers : `${numbers}@${clients.join(',')}`;
}

/** A problem found across routes, at its key path from the top of the file. */
export interface RouteProblem {
  path: Array<string | number>;
  message: string;
}

/**
 * What the routes get wrong against the rest of the file: a name that is no upstream or client,
 * two routes one number and client would tie between (the same prefix for the same clients,
 * compared as sets; absent = every client), two routes of one name.
 */
export function routeProblems(
  routes: readonly ParsedRoute[], upstreams: ReadonlySet<string>, clients: ReadonlySet<string>, receivers: ReadonlySet<string> = new Set(),
): RouteProblem[] {
  const problems: RouteProblem[] = [];
  const byPrefix = new Map<string, number>();
  const byName = new Map<string, number>();
  routes.forEach((r, i) => {
    r.upstreams.forEach((u, j) => {
      if (!upstreams.has(u)) problems.push({ path: ['routes', i, 'upstreams', j], message: 'names no upstream' });
      else if (receivers.has(u)) problems.push({ path: ['routes', i, 'upstreams', j], message: 'names an upstream with bindMode receiver: it cannot send' });
    });
    r.clients?.forEach((c, j) => {
      if (!clients.has(c)) problems.push({ path: ['routes', i, 'clients', j], message: 'names no client' });
    });
    // One route per prefix and client: a client in two lists at one prefix would take the first in
    // the file without a word. Every client's own route and the one for every client are told apart.
    const audience = r.clients === undefined ? ['*'] : [...new Set(r.clients)];
    const sameClients = (j: number): boolean => {
      const other = routes[j]?.clients;
      return other === undefined ? r.clients === undefined
        : r.clients !== undefined && new Set(other).size === audience.length && other.every((c) => audience.includes(c));
    };
    prefixList(r).forEach((prefix, k) => {
      for (const who of audience) {
        const key = `${prefix}@${who}`;
        const first = byPrefix.get(key);
        if (first === undefined) {
          byPrefix.set(key, i);
          continue;
        }
        if (first === i) continue;
        const path = typeof r.prefix === 'string' ? ['routes', i, 'prefix'] : ['routes', i, 'prefix', k];
        problems.push({ path, message: sameClients(first) ? `"${prefix}" is also routes[${first}]'s prefix for the same clients` : `"${prefix}" is also routes[${first}]'s prefix for client ${who}` });
        break;
      }
    });
    const name = r.name ?? routeName(prefixList(r), r.clients);
    const first = byName.get(name);
    if (first === undefined) byName.set(name, i);
    else {
      const earlierNamed = routes[first]?.name !== undefined;
      // Two made names are equal only for the same prefixes and clients: the prefix problem says it.
      if (r.name === undefined && !earlierNamed) return;
      const message = r.name === undefined ? `the name made of its prefixes and clients is routes[${first}].name; give this route a name`
        : earlierNamed ? `duplicates routes[${first}].name` : `is also the name made of routes[${first}]'s prefixes and clients`;
      problems.push({ path: ['routes', i, 'name'], message });
    }
  });
  return problems;
}

/**
 * The routes the daemon uses. Without `routes` in the file: one failover route for every number
 * and client over every upstream, in file order (`upstreams`).
 */
export function resolveRoutes(routes: readonly ParsedRoute[] | undefined, upstreams: readonly string[]): RouteConfig[] {
  if (routes === undefined) {
    // Only receivers: nothing can be sent, every send is refused NO_ROUTE.
    if (upstreams.length === 0) return [];
    return [{ name: DEFAULT_ROUTE_NAME, prefixes: [''], upstreams: [...upstreams], strategy: 'failover', weights: upstreams.map(() => 1) }];
  }
  return routes.map((r) => {
    const prefixes = prefixList(r);
    const route: RouteConfig = {
      name: r.name ?? routeName(prefixes, r.clients),
      prefixes,
      upstreams: [...r.upstreams],
      strategy: r.strategy,
      weights: r.strategy === 'weighted' && r.weights !== undefined ? [...r.weights] : r.upstreams.map(() => 1),
    };
    if (r.clients !== undefined) route.clients = [...r.clients];
    return route;
  });
}

function prefixList(r: ParsedRoute): string[] {
  return typeof r.prefix === 'string' ? [r.prefix] : [...r.prefix];
}

/** `[index, index of the first equal item]` for each item that repeats an earlier one. */
function repeats(items: readonly string[]): Array<[number, number]> {
  const seen = new Map<string, number>();
  const found: Array<[number, number]> = [];
  items.forEach((item, i) => {
    const first = seen.get(item);
    if (first !== undefined) found.push([i, first]);
    else seen.set(item, i);
  });
  return found;
}
