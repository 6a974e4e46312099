/**
 * `smppd start` as a service manager drives it, in a child process: SIGHUP reloads clients and
 * tokens without touching the binds (a file that does not load changes nothing); SIGTERM under
 * load stops taking work, drains, exits 0, and leaves every message it answered 200 for in the
 * store, none in flight (nothing lost, nothing uncertain).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { JsonLinesProcess } from '../support/json-lines-process.js';

const OLD_TOKEN = 'signals-old-token-0123456789';
const NEW_TOKEN = 'signals-new-token-0123456789';
const OTHER_TOKEN = 'signals-other-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(responseDelayMs = 0): Promise<{ dir: string; configPath: string; write: (clients: string, admin?: string) => void }> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'signals', password: 'signals' }],
    behaviour: { responseDelayMs: { min: responseDelayMs, max: responseDelayMs }, receipts: { enabled: false } },
  }, new SystemClock(), silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const dir = mkdtempSync(join(tmpdir(), 'smppd-signals-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'smppd.yaml');
  const write = (clients: string, admin?: string): void => writeFileSync(configPath, [
    'log: { level: info }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: ${clients}`,
    ...(admin === undefined ? [] : [`admin: ${admin}`]),
    'store: { path: smppd.db }',
    'shutdown: { drainSeconds: 10 }',
    'upstreams:',
    `  - { name: sim, host: 127.0.0.1, port: ${port}, systemId: signals, password: signals, binds: 2, ratePerBind: 200 }`,
    '',
  ].join('\n'));
  return { dir, configPath, write };
}

function start(configPath: string): JsonLinesProcess {
  const child = new JsonLinesProcess(process.execPath, ['--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', configPath]);
  cleanups.push(() => child.kill());
  return child;
}

const send = (port: number, token: string, destination = '447700900123') => fetch(`http://127.0.0.1:${port}/sms/sendSms`, {
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify({ senderId: 'signals', destinationNumber: destination, message: 'hello', messageType: 'TEXT' }),
});

describe('signals', () => {
  it('SIGHUP reloads clients and tokens without dropping a bind; a file that does not load changes nothing', async () => {
    const { configPath, write } = await setUp();
    write(`[{ name: app, token: ${OLD_TOKEN} }]`);
    const child = start(configPath);
    const port = Number((await child.next('http_listening', 1, 60_000))[0]!.port);
    expect((await send(port, OLD_TOKEN)).status).toBe(200);

    write(`[{ name: app, token: ${NEW_TOKEN} }, { name: other, token: ${OTHER_TOKEN} }]`);
    child.child.kill('SIGHUP');
    await child.next('clients_reloaded', 1);
    expect((await send(port, OLD_TOKEN)).status).toBe(401);
    expect((await send(port, NEW_TOKEN)).status).toBe(200);
    expect((await send(port, OTHER_TOKEN)).status).toBe(200);

    write('[{ name: app, token: short }]');
    child.child.kill('SIGHUP');
    const [failed] = await child.next('reload_failed', 1);
    expect(failed!.problems).toEqual(['clients[0].token: must be at least 16 characters']);
    expect((await send(port, NEW_TOKEN)).status).toBe(200);

    // The binds stayed up through both reloads.
    expect(child.all('bind_down')).toEqual([]);
    child.child.kill('SIGTERM');
    expect((await child.exited()).code).toBe(0);
    expect(JSON.stringify(child.events)).not.toContain(NEW_TOKEN.slice(0, 12));
  }, 90_000);

  it('SIGHUP reloads the admin tokens: the old one is refused, the new one taken', async () => {
    const { configPath, write } = await setUp();
    write(`[{ name: app, token: ${OLD_TOKEN} }]`, `{ tokens: [{ name: ops, token: admin-${OLD_TOKEN} }] }`);
    const child = start(configPath);
    const port = Number((await child.next('http_listening', 1, 60_000))[0]!.port);
    const status = async (token: string) => (await fetch(`http://127.0.0.1:${port}/admin/status`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await status(`admin-${OLD_TOKEN}`)).toBe(200);
    write(`[{ name: app, token: ${OLD_TOKEN} }]`, `{ tokens: [{ name: ops, token: admin-${NEW_TOKEN} }] }`);
    child.child.kill('SIGHUP');
    await child.next('admins_reloaded', 1);
    expect(await status(`admin-${OLD_TOKEN}`)).toBe(401);
    expect(await status(`admin-${NEW_TOKEN}`)).toBe(200);
    expect(await status(OLD_TOKEN)).toBe(403);
    child.child.kill('SIGTERM');
    expect((await child.exited()).code).toBe(0);
  }, 90_000);

  it('SIGTERM under load: stops taking work, drains, exits 0; every message answered 200 is stored and none is left in flight', async () => {
    // The SMSC answers after 50 ms: at the signal, submit_sm are outstanding on both binds.
    const { dir, configPath, write } = await setUp(50);
    write(`[{ name: app, token: ${OLD_TOKEN} }]`);
    const child = start(configPath);
    const port = Number((await child.next('http_listening', 1, 60_000))[0]!.port);
    const answered = new Set<string>();
    let next = 0;
    let stop = false;
    const load = Promise.all(Array.from({ length: 10 }, async () => {
      while (!stop) {
        const destination = `4915${String(next++).padStart(9, '0')}`;
        try {
          const res = await send(port, OLD_TOKEN, destination);
          if (res.status === 200) answered.add(await res.text());
          else await res.text();
        } catch {
          return; // the listener is closed: no answer, no promise made
        }
      }
    }));
    while (answered.size < 300) await new Promise((r) => setTimeout(r, 20));
    child.child.kill('SIGTERM');
    const exit = await child.exited();
    stop = true;
    await load;
    expect(exit.code).toBe(0);
    expect(child.all('stopped')).toHaveLength(1);

    const db = new Database(join(dir, 'smppd.db'), { readonly: true });
    cleanups.push(() => { db.close(); });
    const stored = new Set((db.prepare('SELECT id FROM messages').all() as Array<{ id: string }>).map((r) => r.id));
    for (const id of answered) expect(stored.has(id), id).toBe(true);
    expect(db.prepare("SELECT COUNT(*) AS n FROM parts WHERE state = 'inflight'").get()).toEqual({ n: 0 });
    const reasons = db.prepare("SELECT DISTINCT reason FROM parts WHERE reason LIKE 'uncertain%'").all();
    expect(reasons).toEqual([]);
  }, 90_000);
});
