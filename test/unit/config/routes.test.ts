import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCheckConfig } from '../../../src/cli/check-config.js';
import { parseConfig } from '../../../src/config/load.js';
import { routeName } from '../../../src/config/schema.js';
import { configRefusal } from '../../support/config.js';

const dir = mkdtempSync(join(tmpdir(), 'smppd-routes-'));
const TOKEN = 'tok-0123456789abcdef';

/** Three upstreams and two clients for the routes to name. */
const base = `upstreams:
  - { name: uk-main, host: uk.example.net, systemId: uk, password: pw }
  - { name: global-backup, host: backup.example.net, systemId: backup, password: pw }
  - { name: eu, host: eu.example.net, systemId: eu, password: pw }
clients:
  - { name: shop, token: ${TOKEN}1 }
  - { name: app, token: ${TOKEN}2 }
`;

const load = (routes: string) => parseConfig(`${base}${routes}`, dir);

/** The problem lines, without the `invalid configuration in …` header. */
async function problems(routes: string): Promise<string[]> {
  return (await configRefusal(() => load(routes))).split('\n').slice(1);
}

describe('routes as written', () => {
  it('takes the documented shape: a prefix or a list, clients, strategy and weights', async () => {
    const c = await load(`routes:
  - prefix: "44"
    upstreams: [uk-main, global-backup]
  - prefix: ["49", "33"]
    upstreams: [eu]
    clients: [shop]
  - prefix: ""
    upstreams: [global-backup, eu]
    strategy: weighted
    weights: [3, 0.5]
`);
    expect(c.routesConfigured).toBe(true);
    expect(c.routes).toEqual([
      { name: '44', prefixes: ['44'], upstreams: ['uk-main', 'global-backup'], strategy: 'failover', weights: [1, 1] },
      { name: '49,33@shop', prefixes: ['49', '33'], upstreams: ['eu'], clients: ['shop'], strategy: 'failover', weights: [1] },
      { name: '*', prefixes: [''], upstreams: ['global-backup', 'eu'], strategy: 'weighted', weights: [3, 0.5] },
    ]);
  });

  it('a route without clients has no clients key: it is for every client', async () => {
    const c = await load('routes: [{ prefix: "44", upstreams: [eu] }]\n');
    expect(c.routes[0]).not.toHaveProperty('clients');
  });

  it('weighted without weights weighs every upstream 1', async () => {
    const c = await load('routes: [{ prefix: "44", upstreams: [eu, uk-main], strategy: weighted }]\n');
    expect(c.routes[0]).toMatchObject({ strategy: 'weighted', weights: [1, 1] });
  });

  it('keeps a given name', async () => {
    const c = await load('routes: [{ name: "uk_main-1.a@b,*", prefix: ["44", "4420"], upstreams: [uk-main], clients: [shop, app] }]\n');
    expect(c.routes[0]!.name).toBe('uk_main-1.a@b,*');
  });

  it('derives a name from the prefixes ("" as *) and the clients', async () => {
    expect(routeName(['44'])).toBe('44');
    expect(routeName(['49', '33'], ['shop'])).toBe('49,33@shop');
    expect(routeName([''])).toBe('*');
    expect(routeName(['', '1'], ['shop', 'app'])).toBe('*,1@shop,app');
    const c = await load('routes:\n  - { prefix: "", upstreams: [eu], clients: [shop, app] }\n  - { prefix: ["447", ""], upstreams: [eu] }\n');
    expect(c.routes.map((r) => r.name)).toEqual(['*@shop,app', '447,*']);
  });

  it('takes the same prefix for other clients, and for a client beside every client', async () => {
    const c = await load(`routes:
  - { prefix: "44", upstreams: [uk-main] }
  - { prefix: "44", upstreams: [eu], clients: [shop] }
  - { prefix: "44", upstreams: [global-backup], clients: [app] }
`);
    expect(c.routes.map((r) => r.name)).toEqual(['44', '44@shop', '44@app']);
  });

  it('upstreams[].failoverAfterSeconds: default 10, any number ≥ 0', async () => {
    const c = await parseConfig(base, dir);
    expect(c.upstreams.map((u) => u.failoverAfterSeconds)).toEqual([10, 10, 10]);
    const set = await parseConfig(base.replace('password: pw }', 'password: pw, failoverAfterSeconds: 0 }').replace('backup, password: pw }', 'backup, password: pw, failoverAfterSeconds: 2.5 }'), dir);
    expect(set.upstreams.map((u) => u.failoverAfterSeconds)).toEqual([0, 2.5, 10]);
  });
});

describe('without routes', () => {
  it('every upstream, in file order, is one failover route for every number and client', async () => {
    const c = await parseConfig(base, dir);
    expect(c.routesConfigured).toBe(false);
    expect(c.routes).toEqual([{ name: 'default', prefixes: [''], upstreams: ['uk-main', 'global-backup', 'eu'], strategy: 'failover', weights: [1, 1, 1] }]);
  });
});

describe('an upstream with bindMode receiver', () => {
  const receiverBase = base.replace('{ name: eu, host: eu.example.net,', '{ name: eu, bindMode: receiver, host: eu.example.net,');

  it('is left out of the route made without routes: it cannot send', async () => {
    const c = await parseConfig(receiverBase, dir);
    expect(c.routes).toEqual([{ name: 'default', prefixes: [''], upstreams: ['uk-main', 'global-backup'], strategy: 'failover', weights: [1, 1] }]);
  });

  it('may not be named by a route', async () => {
    const lines = (await configRefusal(() => parseConfig(`${receiverBase}routes: [{ prefix: "44", upstreams: [uk-main, eu] }]\n`, dir))).split('\n').slice(1);
    expect(lines).toEqual(['routes[0].upstreams[1]: names an upstream with bindMode receiver: it cannot send']);
  });
});

describe('a bad route is refused with its key path and the reason', () => {
  const cases: Array<[string, string, string[]]> = [
    ['an empty list', 'routes: []\n', ['routes: must list at least one route (leave routes out to send every number over every upstream)']],
    ['routes: with nothing after it', 'routes:\n', ['routes: must list at least one route (leave routes out to send every number over every upstream)']],
    ['not a list', 'routes: { prefix: "44" }\n', ['routes: must be a list of routes']],
    ['a route that is not a mapping', 'routes: ["44"]\n', ['routes[0]: must be a mapping { prefix, upstreams, clients, strategy, weights, name }']],
    ['an unknown upstream', 'routes: [{ prefix: "44", upstreams: [uk-main, uk-backup] }]\n', ['routes[0].upstreams[1]: names no upstream']],
    ['an unknown client', 'routes:\n  - { prefix: "44", upstreams: [eu] }\n  - { prefix: "44", upstreams: [eu], clients: [app, shops] }\n',
      ['routes[1].clients[1]: names no client']],
    ['a prefix with a plus', 'routes: [{ prefix: "+44", upstreams: [eu] }]\n', ['routes[0].prefix: must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)']],
    ['a prefix with a space, in a list', 'routes: [{ prefix: ["447", "44 20"], upstreams: [eu] }]\n', ['routes[0].prefix[1]: must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)']],
    ['a prefix starting with 0', 'routes: [{ prefix: "0044", upstreams: [eu] }]\n',
      ['routes[0].prefix: must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)']],
    ['a client in two routes at one prefix', 'routes:\n  - { prefix: "44", upstreams: [eu], clients: [shop] }\n  - { prefix: "44", upstreams: [uk-main], clients: [app, shop] }\n',
      ['routes[1].prefix: "44" is also routes[0]\'s prefix for client shop']],
    ['a prefix longer than a number', 'routes: [{ prefix: "1234567890123456", upstreams: [eu] }]\n', ['routes[0].prefix: must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)']],
    ['a prefix as a YAML number', 'routes: [{ prefix: 44, upstreams: [eu] }]\n',
      ['routes[0].prefix: must be a string of digits or a list of them, e.g. "44" or ["447", "4420"]: put it in quotes']],
    ['a prefix as a YAML number in a list', 'routes: [{ prefix: ["447", 4420], upstreams: [eu] }]\n', ['routes[0].prefix[1]: must be a string: put it in quotes']],
    ['a prefix that is a mapping', 'routes: [{ prefix: { a: 1 }, upstreams: [eu] }]\n',
      ['routes[0].prefix: must be a string of digits or a list of them, e.g. "44" or ["447", "4420"]']],
    ['no prefix', 'routes: [{ upstreams: [eu] }]\n', ['routes[0].prefix: is required']],
    ['an empty prefix list', 'routes: [{ prefix: [], upstreams: [eu] }]\n', ['routes[0].prefix: must list at least one prefix ("" matches any number)']],
    ['a prefix twice in one route', 'routes: [{ prefix: ["44", "33", "44"], upstreams: [eu] }]\n', ['routes[0].prefix[2]: "44" is listed twice']],
    ['no upstreams', 'routes: [{ prefix: "44" }]\n', ['routes[0].upstreams: is required']],
    ['an empty upstreams list', 'routes: [{ prefix: "44", upstreams: [] }]\n', ['routes[0].upstreams: must list at least one upstream']],
    ['upstreams not a list', 'routes: [{ prefix: "44", upstreams: eu }]\n', ['routes[0].upstreams: must be a list of upstream names']],
    ['the same upstream twice', 'routes: [{ prefix: "44", upstreams: [eu, uk-main, eu] }]\n', ['routes[0].upstreams[2]: duplicates upstreams[0]']],
    ['an empty clients list', 'routes: [{ prefix: "44", upstreams: [eu], clients: [] }]\n', ['routes[0].clients: must list at least one client; leave clients out for every client']],
    ['the same client twice', 'routes: [{ prefix: "44", upstreams: [eu], clients: [shop, shop] }]\n', ['routes[0].clients[1]: duplicates clients[0]']],
    ['the same prefix and no clients twice', 'routes:\n  - { prefix: "44", upstreams: [uk-main] }\n  - { prefix: "33", upstreams: [eu] }\n  - { prefix: ["49", "44"], upstreams: [eu] }\n',
      ['routes[2].prefix[1]: "44" is also routes[0]\'s prefix for the same clients']],
    ['the same prefix and the same clients in another order', 'routes:\n  - { prefix: "44", upstreams: [uk-main], clients: [shop, app] }\n  - { prefix: "44", upstreams: [eu], clients: [app, shop] }\n',
      ['routes[1].prefix: "44" is also routes[0]\'s prefix for the same clients']],
    ['"" twice for every client', 'routes:\n  - { prefix: "", upstreams: [uk-main] }\n  - { prefix: "", upstreams: [eu], strategy: weighted }\n',
      ['routes[1].prefix: "" is also routes[0]\'s prefix for the same clients']],
    ['a strategy not known', 'routes: [{ prefix: "44", upstreams: [eu], strategy: round-robin }]\n', ['routes[0].strategy: must be one of failover, weighted']],
    ['weights with failover', 'routes: [{ prefix: "44", upstreams: [eu, uk-main], weights: [1, 2] }]\n', ['routes[0].weights: only with strategy weighted']],
    ['weights with strategy failover said', 'routes: [{ prefix: "44", upstreams: [eu], strategy: failover, weights: [1] }]\n', ['routes[0].weights: only with strategy weighted']],
    ['fewer weights than upstreams', 'routes: [{ prefix: "44", upstreams: [eu, uk-main], strategy: weighted, weights: [1] }]\n',
      ['routes[0].weights: must have one weight per upstream (2), has 1']],
    ['more weights than upstreams', 'routes: [{ prefix: "44", upstreams: [eu], strategy: weighted, weights: [1, 1, 1] }]\n',
      ['routes[0].weights: must have one weight per upstream (1), has 3']],
    ['a weight of 0', 'routes: [{ prefix: "44", upstreams: [eu, uk-main], strategy: weighted, weights: [1, 0] }]\n', ['routes[0].weights[1]: must be a number > 0']],
    ['a negative weight', 'routes: [{ prefix: "44", upstreams: [eu], strategy: weighted, weights: [-1] }]\n', ['routes[0].weights[0]: must be a number > 0']],
    ['an infinite weight', 'routes: [{ prefix: "44", upstreams: [eu], strategy: weighted, weights: [.inf] }]\n', ['routes[0].weights[0]: must be a number > 0']],
    ['a weight as a string', 'routes: [{ prefix: "44", upstreams: [eu], strategy: weighted, weights: ["2"] }]\n', ['routes[0].weights[0]: must be a number > 0']],
    ['an unknown key', 'routes: [{ prefix: "44", upstreams: [eu], client: [shop] }]\n', ['routes[0].client: unknown key']],
    ['a name with a space', 'routes: [{ name: "uk main", prefix: "44", upstreams: [eu] }]\n', ['routes[0].name: must be 1–64 letters, digits, _ . - , * or @']],
    ['a name too long', `routes: [{ name: ${'r'.repeat(65)}, prefix: "44", upstreams: [eu] }]\n`, ['routes[0].name: must be 1–64 letters, digits, _ . - , * or @']],
    ['a made name too long', `routes: [{ prefix: [${Array.from({ length: 6 }, (_, i) => `"${String(i + 1).repeat(10)}"`).join(', ')}], upstreams: [eu] }]\n`,
      ['routes[0].name: is required when the name made of the prefixes and clients would be longer than 64 characters']],
    ['two routes of one name', 'routes:\n  - { name: uk, prefix: "44", upstreams: [uk-main] }\n  - { name: uk, prefix: "4420", upstreams: [eu] }\n',
      ['routes[1].name: duplicates routes[0].name']],
    ['a name equal to a later route\'s made name', 'routes:\n  - { name: "4420", prefix: "44", upstreams: [uk-main] }\n  - { prefix: "4420", upstreams: [eu] }\n',
      ['routes[1].name: the name made of its prefixes and clients is routes[0].name; give this route a name']],
    ['a name equal to an earlier route\'s made name', 'routes:\n  - { prefix: "4420", upstreams: [eu] }\n  - { name: "4420", prefix: "44", upstreams: [uk-main] }\n',
      ['routes[1].name: is also the name made of routes[0]\'s prefixes and clients']],
  ];
  for (const [name, routes, expected] of cases) {
    it(name, async () => {
      expect(await problems(routes)).toEqual(expected);
    });
  }

  it('names every problem of every route at once', async () => {
    expect(await problems(`routes:
  - { prefix: "44", upstreams: [uk-main, nowhere], clients: [nobody], extra: 1 }
  - { prefix: ["4x", "44"], upstreams: [eu, eu], strategy: weighted, weights: [1] }
  - { prefix: "44", upstreams: [eu], clients: [nobody] }
`)).toEqual([
      'routes[0].extra: unknown key',
      'routes[1].prefix[0]: must be digits only (0–9), at most 15, not starting with 0 (numbers start with their country code)',
      'routes[1].upstreams[1]: duplicates upstreams[0]',
      'routes[1].weights: must have one weight per upstream (2), has 1',
      'routes[0].upstreams[1]: names no upstream',
      'routes[0].clients[0]: names no client',
      'routes[2].clients[0]: names no client',
      'routes[2].prefix: "44" is also routes[0]\'s prefix for the same clients',
    ]);
  });
});

describe('smppd check-config', () => {
  const run = async (yaml: string) => {
    const path = join(dir, 'check.yaml');
    writeFileSync(path, yaml);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCheckConfig(['--config', path], { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('prints each route problem on a line of its own', async () => {
    const r = await run(`${base}routes:\n  - { prefix: "44", upstreams: [uk-backup] }\n  - { prefix: "44", upstreams: [eu], strategy: weighted, weights: [1, 2] }\n`);
    expect(r.code).toBe(1);
    expect(r.err.split('\n').slice(1)).toEqual([
      'routes[1].weights: must have one weight per upstream (1), has 2',
      'routes[0].upstreams[0]: names no upstream',
      'routes[1].prefix: "44" is also routes[0]\'s prefix for the same clients',
    ]);
  });

  it('prints the routes the daemon would run with, the made ones included', async () => {
    const configured = await run(`${base}routes: [{ prefix: ["49", "33"], upstreams: [eu, uk-main], clients: [shop] }]\n`);
    expect(configured.code).toBe(0);
    expect(parse(configured.out)).toMatchObject({
      routes: [{ name: '49,33@shop', prefixes: ['49', '33'], upstreams: ['eu', 'uk-main'], clients: ['shop'], strategy: 'failover', weights: [1, 1] }],
      routesConfigured: true,
    });
    const made = await run(base);
    expect(parse(made.out)).toMatchObject({
      routes: [{ name: 'default', prefixes: [''], upstreams: ['uk-main', 'global-backup', 'eu'], strategy: 'failover', weights: [1, 1, 1] }],
      routesConfigured: false,
    });
  });
});
