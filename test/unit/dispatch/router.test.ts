import { describe, expect, it } from 'vitest';
import { RouteTable, type RouteSpec } from '../../../src/dispatch/route-table.js';
import { RouteWatch, Router } from '../../../src/dispatch/router.js';
import { recordingLog } from '../../support/http.js';

function failoverRoute(name: string, prefixes: string[], upstreams: string[]): RouteSpec {
  return { name, prefixes, upstreams, strategy: 'failover', weights: upstreams.map(() => 1) };
}

function weightedRoute(name: string, prefixes: string[], upstreams: string[], weights: number[]): RouteSpec {
  return { name, prefixes, upstreams, strategy: 'weighted', weights };
}

/** Availability the test sets by hand. */
function availability(...up: string[]) {
  const set = new Set(up);
  return {
    set,
    available: (u: string) => set.has(u),
    up(u: string) { set.add(u); },
    down(u: string) { set.delete(u); },
  };
}

/** `n` picks of `upstreamFor(route)`. */
const picks = (router: Router, route: RouteSpec, n: number): Array<string | undefined> => Array.from({ length: n }, () => router.upstreamFor(route));

describe('Router', () => {
  it('route() is the table\'s match: the route, or undefined for a number no route takes', () => {
    const uk = failoverRoute('uk', ['44'], ['a']);
    const router = new Router(new RouteTable([uk]), availability('a'));
    expect(router.route('447700900123', 'app')).toBe(uk);
    expect(router.route('15551234567', 'app')).toBeUndefined();
    expect(router.explain('15551234567', 'app')).toBeUndefined();
  });

  it('a failover route sends to its first available upstream', () => {
    const r = failoverRoute('uk', ['44'], ['a', 'b', 'c']);
    const av = availability('a', 'b', 'c');
    const router = new Router(new RouteTable([r]), av);
    expect(picks(router, r, 3)).toEqual(['a', 'a', 'a']);
    av.down('a');
    expect(picks(router, r, 3)).toEqual(['b', 'b', 'b']);
    av.down('b');
    expect(router.upstreamFor(r)).toBe('c');
    av.up('a');
    expect(router.upstreamFor(r)).toBe('a');
  });

  it('with none available, a send goes to the route\'s first upstream (and waits there)', () => {
    const failover = failoverRoute('uk', ['44'], ['a', 'b']);
    const weighted = weightedRoute('any', [''], ['c', 'd'], [1, 3]);
    const router = new Router(new RouteTable([failover, weighted]), availability());
    expect(router.upstreamFor(failover)).toBe('a');
    expect(picks(router, weighted, 3)).toEqual(['c', 'c', 'c']);
  });

  it('a weighted route [2, 1] sends in the smooth round-robin order a, b, a, repeated', () => {
    const r = weightedRoute('any', [''], ['a', 'b'], [2, 1]);
    const router = new Router(new RouteTable([r]), availability('a', 'b'));
    expect(picks(router, r, 9)).toEqual(['a', 'b', 'a', 'a', 'b', 'a', 'a', 'b', 'a']);
  });

  it('a weighted route spreads exactly by weight over any whole cycle, never two of the lighter in a row', () => {
    const r = weightedRoute('any', [''], ['a', 'b', 'c'], [5, 1, 1]);
    const router = new Router(new RouteTable([r]), availability('a', 'b', 'c'));
    const sequence = picks(router, r, 70);
    expect(sequence.slice(0, 7)).toEqual(['a', 'a', 'b', 'a', 'c', 'a', 'a']); // nginx's smooth WRR for {5, 1, 1}
    for (let cycle = 0; cycle < 10; cycle++) {
      const seven = sequence.slice(cycle * 7, cycle * 7 + 7);
      expect(['a', 'b', 'c'].map((u) => seven.filter((s) => s === u).length)).toEqual([5, 1, 1]);
    }
  });

  it('a weighted route skips an unavailable upstream, and takes it back when it returns', () => {
    const r = weightedRoute('any', [''], ['a', 'b', 'c'], [2, 1, 1]);
    const av = availability('a', 'b', 'c');
    const router = new Router(new RouteTable([r]), av);
    picks(router, r, 4);
    av.down('a');
    const without = picks(router, r, 20);
    expect(without).not.toContain('a');
    expect(without.filter((u) => u === 'b')).toHaveLength(10);
    av.up('a');
    const back = picks(router, r, 40);
    expect(['a', 'b', 'c'].map((u) => back.filter((s) => s === u).length)).toEqual([20, 10, 10]);
  });

  it('two weighted routes keep a rotation each', () => {
    const r1 = weightedRoute('r1', ['44'], ['a', 'b'], [1, 1]);
    const r2 = weightedRoute('r2', ['49'], ['a', 'b'], [1, 1]);
    const router = new Router(new RouteTable([r1, r2]), availability('a', 'b'));
    expect([router.upstreamFor(r1), router.upstreamFor(r2), router.upstreamFor(r1), router.upstreamFor(r2)]).toEqual(['a', 'a', 'b', 'b']);
  });

  it('failoverTarget is an available upstream other than `from`, chosen as a send would be; none: undefined', () => {
    const r = failoverRoute('uk', ['44'], ['a', 'b', 'c']);
    const av = availability('b', 'c');
    const router = new Router(new RouteTable([r]), av);
    expect(router.failoverTarget(r, 'a')).toBe('b');
    // `from` is never the target, even when it is available again.
    av.up('a');
    expect(router.failoverTarget(r, 'a')).toBe('b');
    expect(router.failoverTarget(r, 'b')).toBe('a');
    av.down('b');
    av.down('c');
    expect(router.failoverTarget(r, 'a')).toBeUndefined();

    const w = weightedRoute('w', ['49'], ['a', 'b', 'c'], [1, 1, 1]);
    const wRouter = new Router(new RouteTable([w]), availability('a', 'b', 'c'));
    const targets = Array.from({ length: 6 }, () => wRouter.failoverTarget(w, 'b'));
    expect(targets).not.toContain('b');
    expect(targets.filter((t) => t === 'a')).toHaveLength(3);
    expect(new Router(new RouteTable([w]), availability('b')).failoverTarget(w, 'b')).toBeUndefined();
  });

  it('explain says the route, each upstream\'s availability and weight, and the upstream a send takes now, without moving a weighted rotation', () => {
    const uk = failoverRoute('uk', ['44'], ['a', 'b']);
    const any = weightedRoute('any', [''], ['c', 'd'], [1, 3]);
    const av = availability('b', 'c', 'd');
    const router = new Router(new RouteTable([uk, any]), av);
    expect(router.explain('447700900123', 'app')).toEqual({
      route: uk, upstream: 'b', upstreams: [{ name: 'a', available: false, weight: 1 }, { name: 'b', available: true, weight: 1 }],
    });
    expect(router.explain('15551234567', 'app')?.upstream).toBe('d');
    expect(router.explain('15551234567', 'app')?.upstream).toBe('d');
    // The rotation starts where it would have without the explains: [1, 3] gives d, c, d, d.
    expect(picks(router, any, 4)).toEqual(['d', 'c', 'd', 'd']);
    av.down('c');
    av.down('d');
    expect(router.explain('15551234567', 'app')?.upstream).toBe('c');
  });
});

/** The route_failover / route_returned lines, as objects. */
function routeEvents(lines: string[]): Array<Record<string, unknown>> {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.event === 'route_failover' || l.event === 'route_returned')
    .map(({ msg: _msg, ...rest }) => rest);
}

/** A RouteWatch over `routes`, its log lines, its counters, and a way to change an upstream (the availability's listener). */
function watch(routes: RouteSpec[]) {
  const av = availability();
  const lines: string[] = [];
  const failovers: string[] = [];
  const w = new RouteWatch(routes, av, recordingLog(lines), { routed: () => {}, routeFailover: (route, from, to) => failovers.push(`${route}:${from}->${to}`) });
  const change = (u: string, available: boolean): void => {
    if (available) av.up(u);
    else av.down(u);
    w.changed(u, available);
  };
  return { change, events: () => routeEvents(lines), failovers };
}

describe('RouteWatch', () => {
  it('start-up says nothing; the first upstream going down is a route_failover warning to the next, its return a route_returned warning', () => {
    const { change, events, failovers } = watch([failoverRoute('uk', ['44'], ['a', 'b'])]);
    change('a', true);
    change('b', true);
    expect(events()).toEqual([]);

    change('a', false);
    expect(events()).toEqual([{ level: 'warn', event: 'route_failover', route: 'uk', from: 'a', to: 'b' }]);
    expect(failovers).toEqual(['uk:a->b']);

    change('a', true);
    expect(events().slice(1)).toEqual([{ level: 'warn', event: 'route_returned', route: 'uk', upstream: 'a', from: 'b' }]);
    expect(failovers).toHaveLength(1);
  });

  it('a backup going down while the route sends to its first upstream moves nothing and says nothing', () => {
    const { change, events, failovers } = watch([failoverRoute('uk', ['44'], ['a', 'b'])]);
    change('a', true);
    change('b', true);
    change('b', false);
    change('b', true);
    expect(events()).toEqual([]);
    expect(failovers).toEqual([]);
  });

  it('the last upstream of a route going down is an error to "none"; the first to come back is a return from "none"', () => {
    const { change, events, failovers } = watch([failoverRoute('uk', ['44'], ['a', 'b'])]);
    change('a', true);
    change('b', true);
    change('a', false);
    change('b', false);
    change('b', true);
    change('a', true);
    expect(events()).toEqual([
      { level: 'warn', event: 'route_failover', route: 'uk', from: 'a', to: 'b' },
      { level: 'error', event: 'route_failover', route: 'uk', from: 'b', to: 'none' },
      { level: 'warn', event: 'route_returned', route: 'uk', upstream: 'b', from: 'none' },
      { level: 'warn', event: 'route_returned', route: 'uk', upstream: 'a', from: 'b' },
    ]);
    expect(failovers).toEqual(['uk:a->b', 'uk:b->none']);
  });

  it('each route that names the upstream is told, each with its own next upstream; routes without it are not', () => {
    const { change, events, failovers } = watch([
      failoverRoute('uk', ['44'], ['a', 'b']),
      failoverRoute('eu', ['49'], ['a', 'c']),
      failoverRoute('us', ['1'], ['c']),
    ]);
    for (const u of ['a', 'b', 'c']) change(u, true);
    change('a', false);
    expect(events()).toEqual([
      { level: 'warn', event: 'route_failover', route: 'uk', from: 'a', to: 'b' },
      { level: 'warn', event: 'route_failover', route: 'eu', from: 'a', to: 'c' },
    ]);
    expect(failovers).toEqual(['uk:a->b', 'eu:a->c']);
  });

  it('a weighted route: an upstream going down is a failover to the ones left, counted to the first of them; its return is told', () => {
    const { change, events, failovers } = watch([weightedRoute('any', [''], ['a', 'b', 'c'], [1, 1, 1])]);
    for (const u of ['a', 'b', 'c']) change(u, true);
    expect(events()).toEqual([]);
    change('b', false);
    expect(events()).toEqual([{ level: 'warn', event: 'route_failover', route: 'any', from: 'b', to: 'a,c' }]);
    expect(failovers).toEqual(['any:b->a']);
    change('b', true);
    expect(events().slice(1)).toEqual([{ level: 'warn', event: 'route_returned', route: 'any', upstream: 'b' }]);
  });

  it('an upstream that has never been available says nothing when it comes up after its route\'s others, whichever binds first', () => {
    const failover = watch([failoverRoute('uk', ['44'], ['a', 'b'])]);
    failover.change('b', true); // the backup binds first at start-up
    failover.change('a', true);
    expect(failover.events()).toEqual([]);

    const weighted = watch([weightedRoute('any', [''], ['a', 'b'], [1, 1])]);
    weighted.change('a', true);
    weighted.change('b', true);
    expect(weighted.events()).toEqual([]);
  });
});
