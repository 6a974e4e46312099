import { describe, expect, it } from 'vitest';
import { RouteTable, type RouteSpec } from '../../../src/dispatch/route-table.js';

/** A failover route over `upstreams` (default: one named after the route). */
function route(name: string, prefixes: string[], o: { clients?: string[]; upstreams?: string[] } = {}): RouteSpec {
  const upstreams = o.upstreams ?? [`up-${name}`];
  return { name, prefixes, upstreams, strategy: 'failover', weights: upstreams.map(() => 1), ...(o.clients ? { clients: o.clients } : {}) };
}

/** The name of the route `destination` takes for `client`, or undefined. */
const matched = (table: RouteTable, destination: string, client = 'app'): string | undefined => table.match(destination, client)?.name;

describe('RouteTable', () => {
  it('the longest matching prefix wins, whatever the order of the routes', () => {
    const routes = [route('4', ['4']), route('44', ['44']), route('447', ['447']), route('4420', ['4420'])];
    for (const order of [routes, [...routes].reverse()]) {
      const table = new RouteTable(order);
      expect(matched(table, '447700900123')).toBe('447');
      expect(matched(table, '442079460000')).toBe('4420');
      expect(matched(table, '441234567890')).toBe('44');
      expect(matched(table, '491701234567')).toBe('4');
    }
  });

  it('a prefix longer than the number does not match it; the shorter one that does wins', () => {
    const table = new RouteTable([route('44', ['44']), route('44770', ['44770'])]);
    expect(matched(table, '4477')).toBe('44');
    expect(matched(table, '44770')).toBe('44770');
  });

  it('"" matches any number, and only when nothing longer does', () => {
    const table = new RouteTable([route('any', ['']), route('44', ['44'])]);
    expect(matched(table, '15551234567')).toBe('any');
    expect(matched(table, '447700900123')).toBe('44');
    expect(matched(table, '4')).toBe('any');
  });

  it('no matching route: undefined', () => {
    const table = new RouteTable([route('44', ['44']), route('49', ['49'])]);
    expect(table.match('15551234567', 'app')).toBeUndefined();
    expect(table.match('4', 'app')).toBeUndefined();
    expect(new RouteTable([]).match('447700900123', 'app')).toBeUndefined();
  });

  it('a route with a list of prefixes takes every number of each, and each is compared by its own length', () => {
    const table = new RouteTable([route('eu', ['49', '33', '4420']), route('uk', ['44'])]);
    expect(matched(table, '491701234567')).toBe('eu');
    expect(matched(table, '33612345678')).toBe('eu');
    expect(matched(table, '442079460000')).toBe('eu');
    expect(matched(table, '447700900123')).toBe('uk');
    expect(matched(table, '34612345678')).toBeUndefined();
  });

  it('at an equal prefix, the route that names the client wins over the one for every client; other clients take the general one', () => {
    for (const order of [[route('44', ['44']), route('44@shop', ['44'], { clients: ['shop', 'bank'] })], [route('44@shop', ['44'], { clients: ['shop', 'bank'] }), route('44', ['44'])]]) {
      const table = new RouteTable(order);
      expect(matched(table, '447700900123', 'shop')).toBe('44@shop');
      expect(matched(table, '447700900123', 'bank')).toBe('44@shop');
      expect(matched(table, '447700900123', 'app')).toBe('44');
    }
  });

  it('a client\'s route does not beat a longer general prefix', () => {
    const table = new RouteTable([route('4@shop', ['4'], { clients: ['shop'] }), route('44', ['44']), route('*@shop', [''], { clients: ['shop'] })]);
    expect(matched(table, '447700900123', 'shop')).toBe('44');
    expect(matched(table, '491701234567', 'shop')).toBe('4@shop');
    expect(matched(table, '15551234567', 'shop')).toBe('*@shop');
  });

  it('a route for some clients only is no route for the others', () => {
    const table = new RouteTable([route('44@shop', ['44'], { clients: ['shop'] })]);
    expect(matched(table, '447700900123', 'shop')).toBe('44@shop');
    expect(table.match('447700900123', 'app')).toBeUndefined();
  });

  it('the clients\' routes at one prefix are told apart by client', () => {
    const table = new RouteTable([route('44@shop', ['44'], { clients: ['shop'] }), route('44@bank', ['44'], { clients: ['bank'] })]);
    expect(matched(table, '447700900123', 'shop')).toBe('44@shop');
    expect(matched(table, '447700900123', 'bank')).toBe('44@bank');
    expect(table.match('447700900123', 'app')).toBeUndefined();
  });

  it('a number with a character that is no digit matches only the prefixes before it', () => {
    const table = new RouteTable([route('any', ['']), route('44', ['44']), route('447', ['447'])]);
    expect(matched(table, '44+7')).toBe('44');
    expect(matched(table, '+447')).toBe('any');
  });

  it('byName finds a route by its name, and nothing for a name the configuration does not have', () => {
    const uk = route('uk', ['44']);
    const table = new RouteTable([uk, route('eu', ['49'])]);
    expect(table.byName('uk')).toBe(uk);
    expect(table.byName('gone')).toBeUndefined();
    expect(table.routes.map((r) => r.name)).toEqual(['uk', 'eu']);
  });

  it('10,000 prefixes: every one matches its own route', () => {
    const routes = Array.from({ length: 10_000 }, (_, i) => route(`r${i}`, [String(10_000 + i)]));
    const table = new RouteTable(routes);
    for (let i = 0; i < 10_000; i += 97) expect(matched(table, `${10_000 + i}123456`)).toBe(`r${i}`);
    expect(table.match('99999999', 'app')).toBeUndefined();
  });
});
