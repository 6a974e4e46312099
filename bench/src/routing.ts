/**
 * The routing case: the longest-prefix match the acceptor makes for every message it takes
 * (`RouteTable.match`), on a table of 10,000 random prefixes of 1–6 digits, a tenth of them for
 * one client only, over 1,000,000 random E.164 numbers sent by rotating clients. CPU only, so it
 * runs in the bench's own process. The numbers and prefixes come from a fixed seed: every run
 * matches the same lookups.
 */
import { RouteTable, type RouteSpec } from '../../src/dispatch/index.js';
import { percentile, round } from './stats.js';

export interface RoutingCase {
  name: string;
  prefixes: number;
  /** Every n-th route names one client. */
  clientEvery: number;
  /** Lookups a round. */
  numbers: number;
  /** Timed rounds, after one untimed round that warms the JIT. */
  rounds: number;
}

export const ROUTING_CASES: RoutingCase[] = [
  { name: 'routing: longest-prefix match, 10,000 prefixes', prefixes: 10_000, clientEvery: 10, numbers: 1_000_000, rounds: 5 },
];

export interface RoutingCaseResult {
  case: string;
  prefixes: number;
  clientSpecific: number;
  numbers: number;
  rounds: number;
  /** Of the lookups, those a route took (the others would be NO_ROUTE). */
  matchedPercent: number;
  /** The median round's nanoseconds per match, and the fastest and slowest round's. */
  nsPerMatch: number;
  nsPerMatchMin: number;
  nsPerMatchMax: number;
  /** Building the table from the routes. */
  buildMs: number;
}

const UPSTREAMS = ['uk-main', 'eu', 'global-backup'];
/** The clients that send: the first ten may have routes of their own, 'other' has none. */
const CLIENTS = [...Array.from({ length: 10 }, (_, i) => `client-${i}`), 'other'];
const SEED = 0x5eed;

/** mulberry32: a small seeded generator, so every run draws the same prefixes and numbers. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function digits(random: () => number, length: number, firstNonZero: boolean): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(0x30 + (i === 0 && firstNonZero ? 1 + Math.floor(random() * 9) : Math.floor(random() * 10)));
  return s;
}

/** `count` routes, one prefix each, no prefix twice for the same clients (as the config holds it). */
function randomRoutes(random: () => number, count: number, clientEvery: number): RouteSpec[] {
  const seen = new Set<string>();
  const routes: RouteSpec[] = [];
  while (routes.length < count) {
    const prefix = digits(random, 1 + Math.floor(random() * 6), true);
    const client = routes.length % clientEvery === 0 ? CLIENTS[Math.floor(random() * 10)] : undefined;
    const key = `${prefix}@${client ?? ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const upstream = UPSTREAMS[Math.floor(random() * UPSTREAMS.length)]!;
    routes.push({
      name: key, prefixes: [prefix], upstreams: [upstream], strategy: 'failover', weights: [1],
      ...(client !== undefined ? { clients: [client] } : {}),
    });
  }
  return routes;
}

/** Numbers of 8–15 digits (E.164: at most 15), not starting with 0. */
function randomNumbers(random: () => number, count: number): string[] {
  return Array.from({ length: count }, () => digits(random, 8 + Math.floor(random() * 8), true));
}

function timeRound(table: RouteTable, numbers: readonly string[]): { nsPerMatch: number; matched: number } {
  let matched = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < numbers.length; i++) {
    if (table.match(numbers[i]!, CLIENTS[i % CLIENTS.length]!) !== undefined) matched++;
  }
  return { nsPerMatch: Number(process.hrtime.bigint() - start) / numbers.length, matched };
}

export function runRoutingCase(c: RoutingCase): RoutingCaseResult {
  const random = seeded(SEED);
  const routes = randomRoutes(random, c.prefixes, c.clientEvery);
  const numbers = randomNumbers(random, c.numbers);
  const built = process.hrtime.bigint();
  const table = new RouteTable(routes);
  const buildMs = Number(process.hrtime.bigint() - built) / 1e6;
  const { matched } = timeRound(table, numbers);
  const rounds = Array.from({ length: c.rounds }, () => timeRound(table, numbers).nsPerMatch);
  return {
    case: c.name, prefixes: routes.length, clientSpecific: routes.filter((r) => r.clients !== undefined).length,
    numbers: c.numbers, rounds: c.rounds, matchedPercent: round((100 * matched) / c.numbers),
    nsPerMatch: round(percentile(rounds, 50)), nsPerMatchMin: round(Math.min(...rounds)), nsPerMatchMax: round(Math.max(...rounds)),
    buildMs: round(buildMs),
  };
}

export function renderRoutingTable(results: RoutingCaseResult[]): string {
  const header = ['case', 'prefixes (client-specific)', 'lookups × rounds', 'took a route', 'ns/match median (min–max)', 'table build ms'];
  const rows = results.map((r) => [
    r.case, `${r.prefixes} (${r.clientSpecific})`, `${r.numbers} × ${r.rounds}`, `${r.matchedPercent} %`,
    `${r.nsPerMatch} (${r.nsPerMatchMin}–${r.nsPerMatchMax})`, String(r.buildMs),
  ]);
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
