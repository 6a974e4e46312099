/**
 * The methods each registered path takes, for the answer to a request fastify could not route:
 * a known path with another method is 405 with an Allow header (RFC 9110 §15.5.6), any other
 * path 404. fastify's router knows no such distinction, so the routes are matched again here,
 * from the patterns they were registered with (`/sms/status/:messageId`, `/admin/*`).
 */

export interface RouteEntry {
  method: string;
  /** fastify's form: `/sms/status/:messageId`. */
  url: string;
}

interface Compiled {
  pattern: RegExp;
  methods: Set<string>;
}

export class RouteMethods {
  readonly #routes: RouteEntry[] = [];
  /** Compiled once the routes stop changing (the first unrouted request comes after `ready`). */
  #compiled: Compiled[] | undefined;

  add(route: RouteEntry): void {
    this.#routes.push(route);
    this.#compiled = undefined;
  }

  get routes(): readonly RouteEntry[] {
    return this.#routes;
  }

  /** The methods `path` (no query) takes, sorted; empty when no route has that path. */
  allowed(path: string): string[] {
    this.#compiled ??= compile(this.#routes);
    const methods = new Set<string>();
    for (const c of this.#compiled) if (c.pattern.test(path)) for (const m of c.methods) methods.add(m);
    return [...methods].sort();
  }
}

function compile(routes: readonly RouteEntry[]): Compiled[] {
  const byUrl = new Map<string, Set<string>>();
  for (const r of routes) {
    const methods = byUrl.get(r.url) ?? new Set<string>();
    methods.add(r.method.toUpperCase());
    byUrl.set(r.url, methods);
  }
  return [...byUrl].map(([url, methods]) => ({ pattern: patternOf(url), methods }));
}

/** `:name` is one non-empty segment, a trailing `*` anything; the rest literal. */
function patternOf(url: string): RegExp {
  const source = url.split(/(:[A-Za-z0-9_]+|\*)/).map((piece) => {
    if (piece === '*') return '.*';
    if (piece.startsWith(':')) return '[^/]+';
    return piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }).join('');
  return new RegExp(`^${source}$`);
}
