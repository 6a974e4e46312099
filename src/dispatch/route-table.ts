/**
 * Which route a destination takes: the longest matching prefix wins, and among routes with the
 * same prefix one that names the client wins over one that applies to every client. The table is
 * a trie over the number's digits, so a lookup costs one step per digit (at most 15, E.164),
 * however many prefixes the configuration lists.
 */

/** A route as the configuration resolves it (`routes[]`). */
export interface RouteSpec {
  /** The metric label and log name. */
  readonly name: string;
  /** Digits; '' matches every number. */
  readonly prefixes: readonly string[];
  /** Upstream names, first preferred. */
  readonly upstreams: readonly string[];
  /** Absent: the route applies to every client. */
  readonly clients?: readonly string[];
  readonly strategy: 'failover' | 'weighted';
  /** One per upstream, each > 0. */
  readonly weights: readonly number[];
}

interface Node {
  /** Indexed by digit 0–9. */
  children: Array<Node | undefined>;
  /** The route for every client at this prefix. */
  general?: RouteSpec;
  /** Routes that name clients, by client. */
  byClient?: Map<string, RouteSpec>;
}

const DIGIT_0 = 0x30;

function newNode(): Node {
  return { children: new Array<Node | undefined>(10) };
}

export class RouteTable {
  readonly #root: Node = newNode();
  readonly #byName: ReadonlyMap<string, RouteSpec>;

  /** `routes` as validated by the configuration: prefixes are digits, no prefix twice for the same clients. */
  constructor(readonly routes: readonly RouteSpec[]) {
    this.#byName = new Map(routes.map((r) => [r.name, r]));
    for (const route of routes) {
      for (const prefix of route.prefixes) {
        const node = this.#nodeFor(prefix);
        if (route.clients === undefined) {
          node.general ??= route;
          continue;
        }
        const byClient = node.byClient ??= new Map<string, RouteSpec>();
        for (const client of route.clients) if (!byClient.has(client)) byClient.set(client, route);
      }
    }
  }

  /** The route `destination` (digits) takes for `client`; undefined when none matches. */
  match(destination: string, client: string): RouteSpec | undefined {
    let node: Node | undefined = this.#root;
    let found = choose(node, client);
    for (let i = 0; i < destination.length; i++) {
      const digit = destination.charCodeAt(i) - DIGIT_0;
      node = digit >= 0 && digit <= 9 ? node.children[digit] : undefined;
      if (node === undefined) break;
      found = choose(node, client) ?? found;
    }
    return found;
  }

  /** The route of that name, if the configuration still has it. */
  byName(name: string): RouteSpec | undefined {
    return this.#byName.get(name);
  }

  #nodeFor(prefix: string): Node {
    let node = this.#root;
    for (let i = 0; i < prefix.length; i++) {
      const digit = prefix.charCodeAt(i) - DIGIT_0;
      node = node.children[digit] ??= newNode();
    }
    return node;
  }
}

function choose(node: Node, client: string): RouteSpec | undefined {
  return node.byClient?.get(client) ?? node.general;
}
