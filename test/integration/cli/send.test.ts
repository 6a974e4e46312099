/**
 * `smppd send` against a real daemon in this process, over HTTP only: the daemon of a config
 * file with the built-in simulator (the operator's path: --config, the token from tokenFile),
 * and a second daemon whose upstream is a simulator the tests steer (REJECTED, FAILED, no
 * receipt). The command only polls GET /sms/status, which has no history, so receipts come
 * 600 ms after the submit_sm_resp: long enough for the 250 ms poll to see SENT before DELIVERED.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../support/free-port.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { loadConfigFile, parseConfig } from '../../../src/config/load.js';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { runSend } from '../../../src/cli/send.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';

const TOKEN = 'send-test-token-0123456789abcdef';
const STEERED_TOKEN = 'steered-token-0123456789abcdef';
const WRONG_TOKEN = 'wrong-token-fedcba9876543210';
const RECEIPT_DELAY_MS = 600;

const cleanups: Array<() => Promise<void> | void> = [];
let dir: string;
let configFile: string;
let daemon: RunningDaemon;
let url: string;
let sim: SmscSimulator;
let steered: RunningDaemon;
let steeredUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smppd-send-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

  // The daemon as an operator runs it: a config file, a wildcard listen address, the token in a file.
  const [smscPort, httpPort] = [await freePort(), await freePort()];
  writeFileSync(join(dir, 'app.token'), `${TOKEN}\n`);
  configFile = join(dir, 'smppd.yaml');
  writeFileSync(configFile, [
    'log: { level: silent }',
    `http: { listen: "0.0.0.0:${httpPort}" }`,
    'clients: [{ name: app, tokenFile: app.token, senders: [MyBrand] }]',
    'store: { path: smppd.db }',
    `simulator: { enabled: true, port: ${smscPort}, systemId: demo, password: demopw, deliveryReceiptDelayMs: ${RECEIPT_DELAY_MS} }`,
    'upstreams:',
    `  - { name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: demo, password: demopw, binds: 1, ratePerBind: 0 }`,
    '',
  ].join('\n'));
  daemon = await startDaemon(await loadConfigFile(configFile), { clock: new SystemClock(), log: silentLog });
  cleanups.push(() => daemon.stop());
  url = `http://127.0.0.1:${daemon.http.port}`;

  // A daemon whose SMSC the tests steer with setBehaviour.
  sim = new SmscSimulator({ port: 0, accounts: [{ systemId: 'steer', password: 'steerpw' }], record: true, behaviour: { receipts: { delayMs: RECEIPT_DELAY_MS } } }, new SystemClock(), silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: ops, token: ${STEERED_TOKEN} }]`,
    'store: { path: steered.db }',
    'upstreams:',
    `  - { name: steered, host: 127.0.0.1, port: ${port}, systemId: steer, password: steerpw, binds: 1, ratePerBind: 0 }`,
    '',
  ].join('\n'), dir);
  steered = await startDaemon(config, { clock: new SystemClock(), log: silentLog });
  cleanups.push(() => steered.stop());
  steeredUrl = `http://127.0.0.1:${steered.http.port}`;
});

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});


interface Run { code: number; out: string[]; err: string[] }

/** runSend with captured output; no SMPPD_TOKEN unless given. Every run checks that no token was printed. */
async function send(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSend(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env });
  const printed = [...out, ...err].join('\n');
  for (const t of [TOKEN, STEERED_TOKEN, WRONG_TOKEN]) expect(printed).not.toContain(t);
  return { code, out, err };
}

const message = ['--to', '447700900123', '--from', 'MyBrand', '--text', 'test'];
/** The first word of each status line (the lines after `id …`). */
const statuses = (r: Run): string[] => r.out.slice(1).map((l) => l.split(' ')[0]!);
const idOf = (r: Run): string => /^id (\S+)$/.exec(r.out[0] ?? '')?.[1] ?? '';

async function statusOnDaemon(base: string, token: string, id: string): Promise<string> {
  const res = await fetch(`${base}/sms/status/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { status: string }).status;
}

describe('smppd send', () => {
  it('prints the id, then SENT and DELIVERED, and exits 0', async () => {
    const r = await send([...message, '--url', url], { SMPPD_TOKEN: TOKEN });
    expect(r.code).toBe(0);
    expect(r.err).toEqual([]);
    const id = idOf(r);
    expect(id).not.toBe('');
    const seen = statuses(r);
    expect(seen.indexOf('SENT')).toBeGreaterThanOrEqual(0);
    expect(seen.indexOf('SENT')).toBeLessThan(seen.indexOf('DELIVERED'));
    expect(seen.at(-1)).toBe('DELIVERED');
    expect(r.out.at(-1)).toMatch(/^DELIVERED {2}\+\d+\.\d\ds {2}part 1 DELIVERED smsc \S+$/);
    expect(await statusOnDaemon(url, TOKEN, id)).toBe('DELIVERED');
  });

  it('--config: the URL from http.listen (0.0.0.0 → 127.0.0.1) and the only client\'s tokenFile', async () => {
    const r = await send(['--to', '447700900123', '--from', 'MyBrand', '--text', 'тест', '--unicode', '--config', configFile]);
    expect(r.code).toBe(0);
    expect(statuses(r).at(-1)).toBe('DELIVERED');
  });

  it('--json prints one JSON object a line: accepted, then each status', async () => {
    const tokenFile = join(dir, 'token-for-json');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const r = await send([...message, '--url', url, '--token-file', tokenFile, '--json']);
    expect(r.code).toBe(0);
    const events = r.out.map((l) => JSON.parse(l) as { event: string; messageId: string; status?: string; parts?: unknown[] });
    expect(events[0]).toEqual({ event: 'accepted', messageId: expect.any(String) });
    expect(events.slice(1).every((e) => e.event === 'status' && e.messageId === events[0]!.messageId)).toBe(true);
    expect(events.map((e) => e.status)).toContain('SENT');
    expect(events.at(-1)).toMatchObject({ status: 'DELIVERED', reason: null, parts: [{ part: 1, status: 'DELIVERED' }] });
  });

  it('a bad number: exit 1 with the API\'s errorCode VALIDATION and message', async () => {
    const r = await send(['--to', '+447700900123', '--from', 'MyBrand', '--text', 'test', '--url', url], { SMPPD_TOKEN: TOKEN });
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err.join('\n')).toMatch(/HTTP 400 VALIDATION: destinationNumber: /);
  });

  it('--json: the error as a JSON line', async () => {
    const r = await send(['--to', '0447700900123', '--from', 'MyBrand', '--text', 'test', '--url', url, '--json'], { SMPPD_TOKEN: TOKEN });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out[0]!)).toMatchObject({ event: 'error', httpStatus: 400, errorCode: 'VALIDATION' });
  });

  it('a wrong token: exit 1 with the 401 message', async () => {
    const raw = await fetch(`${url}/sms/status/1`, { headers: { authorization: `Bearer ${WRONG_TOKEN}` } });
    const { message: said } = (await raw.json()) as { message: string };
    const r = await send([...message, '--url', url], { SMPPD_TOKEN: WRONG_TOKEN });
    expect(r.code).toBe(1);
    expect(r.err.join('\n')).toContain(`HTTP 401 Unauthorized: ${said}`);
  });

  it('a refusal that quotes the token prints it masked', async () => {
    // A proxy that echoes the Authorization header back: the token must not reach the terminal.
    const echo = createHttpServer((req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `bad header ${req.headers.authorization}` }));
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    try {
      const r = await send([...message, '--url', `http://127.0.0.1:${(echo.address() as AddressInfo).port}`], { SMPPD_TOKEN: TOKEN });
      expect(r.code).toBe(1);
      expect(r.err.join('\n')).toContain('bad header Bearer ***');
    } finally {
      await new Promise((r) => echo.close(r));
    }
  });

  it('usage errors exit 2 and send nothing: an unknown flag, a missing --to, no token', async () => {
    const before = (await steeredCounters()).submitsReceived;
    const unknown = await send([...message, '--url', steeredUrl, '--bogus'], { SMPPD_TOKEN: STEERED_TOKEN });
    expect(unknown.code).toBe(2);
    expect(unknown.err.join('\n')).toContain("Unknown option '--bogus'");
    const noTo = await send(['--from', 'MyBrand', '--text', 'test', '--url', steeredUrl], { SMPPD_TOKEN: STEERED_TOKEN });
    expect(noTo.code).toBe(2);
    expect(noTo.err.join('\n')).toContain('--to is required');
    const noToken = await send([...message, '--url', steeredUrl]);
    expect(noToken.code).toBe(2);
    expect(noToken.err.join('\n')).toContain('no token');
    const badTimeout = await send([...message, '--url', steeredUrl, '--timeout', 'soon'], { SMPPD_TOKEN: STEERED_TOKEN });
    expect(badTimeout.code).toBe(2);
    expect((await steeredCounters()).submitsReceived).toBe(before);
  });

  it('--config with two clients and no token asks which one (exit 2)', async () => {
    const two = join(dir, 'two-clients.yaml');
    writeFileSync(two, [
      'clients:',
      `  - { name: a, token: ${TOKEN} }`,
      `  - { name: b, token: ${STEERED_TOKEN} }`,
      'upstreams: [{ name: u, host: 127.0.0.1, port: 2775, systemId: x, password: y }]',
      '',
    ].join('\n'));
    const r = await send([...message, '--config', two]);
    expect(r.code).toBe(2);
    expect(r.err[0]).toContain('has 2 clients');
  });

  it('--help prints the usage and exits 0', async () => {
    const r = await send(['--help']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^Usage: smppd send --to NUMBER --from SENDER --text TEXT/);
  });
});

describe('smppd send, the SMSC refusing or failing', () => {
  const steer = (argv: string[]): Promise<Run> => send([...argv, '--url', steeredUrl], { SMPPD_TOKEN: STEERED_TOKEN });

  it('REJECTED by submit_sm_resp ESME_RINVDSTADR: exit 1 with the reason', async () => {
    sim.setBehaviour({ submitStatus: { 0x0b: 1 }, receipts: { outcomes: { DELIVRD: 1 }, enabled: true } });
    const r = await steer(['--to', '447700900555', '--from', 'Ops', '--text', 'отклонить', '--unicode']);
    expect(r.code).toBe(1);
    expect(r.out.at(-1)).toMatch(/^REJECTED {2}\+\S+ {2}reason ESME_RINVDSTADR \(0x0000000B\) {2}part 1 REJECTED$/);
    expect(sim.recordedSubmits().at(-1)).toMatchObject({ destinationAddr: '447700900555', sourceAddr: 'Ops', dataCoding: 8, messageId: '' });
  });

  it('FAILED by an UNDELIV receipt: SENT, then FAILED with stat and err, exit 1', async () => {
    sim.setBehaviour({ submitStatus: { 0: 1 }, receipts: { outcomes: { UNDELIV: 1 }, enabled: true } });
    const r = await steer(['--to', '447700900556', '--from', 'Ops', '--text', 'fail me', '--json']);
    expect(r.code).toBe(1);
    const events = r.out.map((l) => JSON.parse(l) as { status?: string; reason?: string | null });
    expect(events.map((e) => e.status)).toContain('SENT');
    expect(events.at(-1)).toMatchObject({ status: 'FAILED', reason: expect.stringMatching(/^stat:UNDELIV err:\d+$/) });
  });

  it('no receipt: gives up after --timeout with the last status, exit 1', async () => {
    sim.setBehaviour({ submitStatus: { 0: 1 }, receipts: { enabled: false } });
    const r = await steer(['--to', '447700900557', '--from', 'Ops', '--text', 'wait', '--timeout', '0.8']);
    expect(r.code).toBe(1);
    expect(statuses(r).at(-1)).toBe('SENT');
    expect(r.err.join('\n')).toContain('no final status within 0.8 s; last seen SENT');
  });
});

async function steeredCounters(): Promise<{ submitsReceived: number }> {
  return sim.counters().totals;
}
