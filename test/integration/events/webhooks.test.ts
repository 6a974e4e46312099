/**
 * Events: every status change of a message and every inbound message reaches the
 * client's webhook from the store's outbox, signed, in order per message, and none is lost —
 * through a receiver that fails in patterns, one that is down for a while, events parked as
 * dead and re-sent, and a daemon killed with SIGKILL and started again on the same store.
 *
 * The daemon is the one `smppd start` builds (startDaemon from a parsed config; a child process
 * where it is killed), the SMSC a simulator in this process (so the tests can send MO and change
 * receipt timing), the webhook a real HTTP server on loopback. The tests assert on what that
 * receiver acknowledged, with real time and short retry settings.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { version } from '../../../src/cli/version.js';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { loadConfigFile, parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { verifySignature } from '../../../src/events/signature.js';
import type { BehaviourPatch } from '../../../src/simulator/behaviour.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import type { InboundEventPayload, StatusEventPayload } from '../../../src/store/event-payloads.js';
import { until } from '../../support/engine.js';
import { JsonLinesProcess } from '../../support/json-lines-process.js';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from '../../support/webhook-receiver.js';

const TOKEN = 'webhook-test-token-0123456789';
const SECRET = 'webhook-test-secret-0123456789';
const SYSTEM_ID = 'hooks';
const PASSWORD = 'hookspw';
/** The path of a message that is delivered, in the order its events must arrive. */
const FLOW = ['SUBMITTED', 'SENT', 'DELIVERED'] as const;
const RANK: Readonly<Record<string, number>> = { SUBMITTED: 0, SENT: 1, DELIVERED: 2 };
const LONG_TEXT = 'z'.repeat(200); // two GSM-7 parts

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface WebhookSettings {
  timeoutSeconds: number;
  concurrency: number;
  retry: { initialSeconds: number; maxSeconds: number };
  maxAgeHours: number;
}

/** Quick retries; a timeout no healthy loopback answer comes near, so a 2xx is never mistaken for a timeout. */
const QUICK: WebhookSettings = { timeoutSeconds: 5, concurrency: 4, retry: { initialSeconds: 0.05, maxSeconds: 0.2 }, maxAgeHours: 1 };

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-webhooks-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function simulator(behaviour: BehaviourPatch): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: SYSTEM_ID, password: PASSWORD }], behaviour }, new SystemClock(), silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  return { sim, port };
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver();
  cleanups.push(() => r.close());
  return r;
}

/** The daemon's config as YAML (JSON is YAML): one client `app` with a signed webhook, one upstream. */
function configText(o: { smscPort: number; hook: WebhookReceiver; webhook: WebhookSettings; inboundNumbers?: string[]; logLevel?: string }): string {
  return JSON.stringify({
    log: { level: o.logLevel ?? 'silent' },
    http: { listen: '127.0.0.1:0' },
    clients: [{
      name: 'app', token: TOKEN,
      webhook: { url: o.hook.url, secret: SECRET, allowHttp: true, ...o.webhook },
      ...(o.inboundNumbers ? { inboundNumbers: o.inboundNumbers } : {}),
    }],
    store: { path: 'smppd.db' },
    upstreams: [{ name: 'sim', host: '127.0.0.1', port: o.smscPort, systemId: SYSTEM_ID, password: PASSWORD, binds: 1, ratePerBind: 0 }],
  });
}

async function inProcess(config: Parameters<typeof startDaemon>[0]): Promise<RunningDaemon & { api: Api }> {
  const d = await startDaemon(config, { clock: new SystemClock(), log: silentLog });
  cleanups.push(() => d.stop());
  return { ...d, api: api(d.http.port) };
}

async function daemon(o: Parameters<typeof configText>[0]): Promise<RunningDaemon & { api: Api; dir: string }> {
  const dir = tempDir();
  return { ...(await inProcess(await parseConfig(configText(o), dir))), dir };
}

interface DeadEntry { id: number; kind: string; messageId: string | null; lastError: string | null; attempts: number; event: StatusEventPayload }
type Api = ReturnType<typeof api>;

function api(port: number) {
  const call = async (method: string, path: string, body?: object): Promise<Response> => fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = async <T>(res: Response): Promise<T> => {
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    /** Sends one message; resolves with its id. */
    async send(destination: string, message: string): Promise<string> {
      const res = await call('POST', '/sms/sendSms', { senderId: 'smppd', destinationNumber: destination, message, messageType: 'TEXT' });
      if (res.status !== 200) throw new Error(`sendSms: HTTP ${res.status}: ${await res.text()}`);
      return res.text();
    },
    async status(id: string): Promise<string> {
      return (await json<{ status: string }>(await call('GET', `/sms/status/${id}`))).status;
    },
    async dead(): Promise<DeadEntry[]> {
      return (await json<{ events: DeadEntry[] }>(await call('GET', '/events/dead'))).events;
    },
    async resendDead(): Promise<{ requeued: number; superseded: number }> {
      return json(await call('POST', '/events/dead/resend', { all: true }));
    },
  };
}

interface Sent { destination: string; parts: number }

/** `count` messages, every fourth one of two parts, sent at once; by id. */
async function sendMessages(a: Api, count: number, prefix: string): Promise<Map<string, Sent>> {
  const list = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const destination = `${prefix}${String(i).padStart(4, '0')}`;
    const parts = i % 4 === 0 ? 2 : 1;
    return [await a.send(destination, parts === 2 ? LONG_TEXT : `hello ${i}`), { destination, parts }] as const;
  }));
  return new Map(list);
}

/** Per message, the statuses of its status events among `requests`, in their order. */
function statusesByMessage(requests: readonly ReceivedRequest[]): Map<string, string[]> {
  const by = new Map<string, string[]>();
  for (const r of requests) {
    const e = r.json as Partial<StatusEventPayload> | undefined;
    if (e?.type !== 'status' || e.messageId === undefined || e.status === undefined) continue;
    by.set(e.messageId, [...(by.get(e.messageId) ?? []), e.status]);
  }
  return by;
}

/** Every message in `ids` has each status of FLOW among `requests`. */
function allArrived(requests: readonly ReceivedRequest[], ids: Iterable<string>): boolean {
  const by = statusesByMessage(requests);
  return [...ids].every((id) => FLOW.every((s) => by.get(id)?.includes(s)));
}

/**
 * Every message got each status of FLOW, and never one behind a status already acknowledged:
 * the sequence is non-decreasing (a status may repeat: an acknowledgement that did not reach
 * smppd in time is retried), so the first acknowledgements are in FLOW order too.
 */
function expectOrderedAndComplete(requests: readonly ReceivedRequest[], ids: Iterable<string>): void {
  const by = statusesByMessage(requests);
  for (const id of ids) {
    const seen = by.get(id) ?? [];
    const regressed = seen.some((s, i) => i > 0 && RANK[s]! < RANK[seen[i - 1]!]!);
    expect(regressed, `${id}: ${seen.join(' → ')}`).toBe(false);
    expect([...new Set(seen)], id).toEqual(FLOW);
  }
}

describe('webhook events', () => {
  it('every status change reaches the webhook once, signed, in order per message, with the documented body', async () => {
    const { port } = await simulator({ receipts: { delayMs: 10 } });
    const hook = await receiver();
    const d = await daemon({ smscPort: port, hook, webhook: QUICK });
    const sent = await sendMessages(d.api, 30, '4477009');

    await until(() => allArrived(hook.accepted, sent.keys()), 15_000, 'SUBMITTED, SENT and DELIVERED of every message');
    const by = statusesByMessage(hook.accepted);
    for (const id of sent.keys()) expect(by.get(id), id).toEqual(FLOW);
    expect(hook.accepted).toHaveLength(3 * sent.size); // nothing else, nothing twice
    expect(hook.received).toHaveLength(hook.accepted.length);
    expect(new Set(hook.accepted.map((r) => r.headers['x-smppd-event-id'])).size).toBe(hook.accepted.length);

    const lastTimestamp = new Map<string, string>();
    for (const r of hook.accepted) {
      const header = String(r.headers['x-smppd-signature']);
      const t = Number(/^t=(\d+),/.exec(header)?.[1]);
      expect(String(t)).toBe(r.headers['x-smppd-timestamp']);
      const id = String(r.headers['x-smppd-event-id']);
      expect(verifySignature(SECRET, header, id, r.body, Math.floor(r.at / 1000)), `${header} over ${id} and ${r.body}`).toBe(true);
      expect(verifySignature(`${SECRET}x`, header, id, r.body, Math.floor(r.at / 1000))).toBe(false);
      expect(verifySignature(SECRET, header, id, `${r.body} `, Math.floor(r.at / 1000))).toBe(false);
      expect(verifySignature(SECRET, header, String(Number(id) + 1), r.body, Math.floor(r.at / 1000))).toBe(false);
      expect(r.headers['x-smppd-event-id']).toMatch(/^\d+$/);
      expect(r.headers['content-type']).toBe('application/json');

      const e = r.json as StatusEventPayload;
      const message = sent.get(e.messageId)!;
      expect(Object.keys(e).sort()).toEqual(['batchId', 'channel', 'destination', 'messageId', 'part', 'parts', 'reason', 'receipt', 'smscMessageId', 'status', 'timestamp', 'type']);
      expect(e).toMatchObject({ type: 'status', channel: 'sms', destination: message.destination, reason: null, batchId: null, parts: message.parts });
      expect(new Date(e.timestamp).toISOString()).toBe(e.timestamp);
      expect(r.headers['user-agent']).toBe(`smppd/${version()}`);
      // A message's timestamps never go back, even for a receipt read before its SENT was recorded.
      const previous = lastTimestamp.get(e.messageId);
      if (previous !== undefined) expect(e.timestamp >= previous, `${e.messageId} ${e.status} ${e.timestamp} after ${previous}`).toBe(true);
      lastTimestamp.set(e.messageId, e.timestamp);
      if (e.status === 'SUBMITTED') {
        expect(e).toMatchObject({ part: null, smscMessageId: null, receipt: null });
        continue;
      }
      expect(e.part).toEqual({ part: expect.any(Number), status: e.status, smscMessageId: expect.any(String) });
      expect(e.part!.part).toBeGreaterThanOrEqual(1);
      expect(e.part!.part).toBeLessThanOrEqual(message.parts);
      expect(e.smscMessageId).toBe(e.part!.smscMessageId);
      if (e.status === 'SENT') expect(e.receipt).toBeNull();
      else expect(e.receipt).toMatchObject({ stat: 'DELIVRD' });
    }
  });

  it('a receiver answering 500, hanging, resetting and answering too late still gets every event, never one behind a later one', async () => {
    const { port } = await simulator({ receipts: { delayMs: { min: 10, max: 300 } } });
    const hook = await receiver();
    const timeoutSeconds = 0.3;
    // Answered 200 only after smppd gave up on the attempt (and closed the connection): the
    // receiver saw and acknowledged it, smppd did not. That is no delivery (smppd sends the
    // event again), so the order is checked over the acknowledgements smppd could have read:
    // `hook.accepted` without these (the receiver leaves a 200 written to a closed socket out of
    // `accepted` anyway; the filter does not rely on it).
    // Every other 2xx was written at once; if smppd still timed it out (a slow machine), the
    // receiver's acknowledgement was written before smppd's timer fired, so before the retry
    // and before any later event of the message, which is only claimed once smppd has recorded
    // the earlier one as delivered: the order over `accepted` holds, with a repeat at most.
    const late = new Set<ReceivedRequest>();
    const replies = { 500: 0, hang: 0, reset: 0, late: 0 };
    hook.setBehaviour(async (req, i) => {
      if (i % 3 === 2) { replies[500]++; return { status: 500 }; }
      if (i % 7 === 1) { replies.hang++; return { hang: true }; }
      if (i % 11 === 5) { replies.reset++; return { destroy: true }; }
      if (i % 13 === 4) {
        replies.late++;
        late.add(req);
        await sleep(timeoutSeconds * 1000 + 300);
        return { status: 200 };
      }
      return { status: 200 };
    });
    const d = await daemon({ smscPort: port, hook, webhook: { ...QUICK, timeoutSeconds } });
    const sent = await sendMessages(d.api, 24, '4477008');
    const acknowledged = () => hook.accepted.filter((r) => !late.has(r));

    await until(() => allArrived(acknowledged(), sent.keys()), 30_000, 'every event acknowledged');
    expectOrderedAndComplete(acknowledged(), sent.keys());
    expect(replies[500]).toBeGreaterThan(0);
    expect(replies.hang).toBeGreaterThan(0);
    expect(replies.reset).toBeGreaterThan(0);
    expect(replies.late).toBeGreaterThan(0);
    // What the receiver saw of a failed attempt came again, under the same event id.
    const ackedIds = new Set(acknowledged().map((r) => r.headers['x-smppd-event-id']));
    for (const r of hook.received) expect(ackedIds.has(r.headers['x-smppd-event-id'])).toBe(true);
  }, 40_000);

  it('a receiver down for two seconds while messages are sent and receipts arrive loses nothing', async () => {
    const { port } = await simulator({ receipts: { delayMs: { min: 10, max: 1_500 } } });
    const hook = await receiver();
    const d = await daemon({ smscPort: port, hook, webhook: QUICK });
    const sent = await sendMessages(d.api, 6, '4477007');
    await hook.stop();
    for (let i = 0; i < 4; i++) {
      for (const [id, m] of await sendMessages(d.api, 4, `447706${i}`)) sent.set(id, m);
      await sleep(250);
    }
    await sleep(1_000);
    const pending = (await d.outboxDepth()).find((o) => o.client === 'app')?.pending ?? 0;
    expect(pending).toBeGreaterThan(0); // the downtime held events back
    await hook.restart();

    await until(() => allArrived(hook.accepted, sent.keys()), 20_000, 'every event after the restart');
    // A request cut by the stop may have been acknowledged by the receiver without smppd
    // reading the answer: a repeat is allowed, a step back is not.
    expectOrderedAndComplete(hook.accepted, sent.keys());
    expect(await d.api.dead()).toEqual([]);
  }, 30_000);

  it('events failing past maxAgeHours are parked as dead; re-sent, they arrive in order, and superseded ones are reported, not sent', async () => {
    const { sim, port } = await simulator({ receipts: { delayMs: 10 } });
    const hook = await receiver();
    hook.setBehaviour(() => ({ status: 500 }));
    // 0.0005 h = 1.8 s from when an event was queued until it is parked.
    const d = await daemon({ smscPort: port, hook, webhook: { ...QUICK, timeoutSeconds: 2, maxAgeHours: 0.0005 } });
    const whole = await sendMessages(d.api, 6, '4477006');
    await until(async () => (await Promise.all([...whole.keys()].map((id) => d.api.status(id)))).every((s) => s === 'DELIVERED'), 10_000, 'DELIVERED');
    // These messages' receipts come after their SUBMITTED and SENT events are dead: their
    // DELIVERED event is then live behind two dead ones.
    sim.setBehaviour({ receipts: { delayMs: 3_000 } });
    const overtaken = await sendMessages(d.api, 4, '4477016');
    await until(async () => (await Promise.all([...overtaken.keys()].map((id) => d.api.status(id)))).every((s) => s === 'DELIVERED'), 10_000, 'DELIVERED');
    await until(async () => (await d.api.dead()).length >= 3 * whole.size + 2 * overtaken.size, 10_000, 'events parked as dead');

    const dead = await d.api.dead();
    expect(dead).toHaveLength(3 * whole.size + 2 * overtaken.size);
    for (const e of dead) {
      expect(e).toMatchObject({ kind: 'status', lastError: 'HTTP 500' });
      expect(e.attempts).toBeGreaterThanOrEqual(1);
      expect(e.event.messageId).toBe(e.messageId);
      expect(e.event.status).toMatch(overtaken.has(e.messageId!) ? /^(SUBMITTED|SENT)$/ : /^(SUBMITTED|SENT|DELIVERED)$/);
    }

    // A dead SUBMITTED or SENT re-sent behind the message's live DELIVERED would move the
    // receiver's status back: those are dropped and counted.
    expect(await d.api.resendDead()).toEqual({ requeued: 3 * whole.size, superseded: 2 * overtaken.size });
    hook.setBehaviour(() => ({ status: 200 }));

    const expected = [...whole.keys(), ...overtaken.keys()];
    await until(() => {
      const by = statusesByMessage(hook.accepted);
      return expected.every((id) => by.get(id)?.includes('DELIVERED'));
    }, 10_000, 'the re-sent events and the live ones');
    const by = statusesByMessage(hook.accepted);
    for (const id of whole.keys()) expect(by.get(id), id).toEqual(FLOW);
    for (const id of overtaken.keys()) expect(by.get(id), id).toEqual(['DELIVERED']);
    expect(await d.api.dead()).toEqual([]);
  }, 30_000);

  it('an inbound message to a number of the client reaches its webhook; one to no client\'s number does not', async () => {
    const { sim, port } = await simulator({});
    const hook = await receiver();
    const d = await daemon({ smscPort: port, hook, webhook: QUICK, inboundNumbers: ['12345'] });
    const mo = (destination: string, text: string) => ({ source: '447700900555', destination, shortMessage: Buffer.from(text, 'latin1'), dataCoding: 0 });
    // sendMo sends nothing until the daemon's bind is up.
    await until(() => sim.sendMo(mo('99999', 'to nobody')) !== undefined, 10_000, 'a receiving bind');
    expect(sim.sendMo(mo('12345', 'hello smppd'))).toBeDefined();

    await hook.waitForAccepted(1);
    const inbound = hook.accepted[0]!;
    const e = inbound.json as InboundEventPayload;
    expect(Object.keys(e).sort()).toEqual([
      'channel', 'dataCoding', 'destination', 'inboundId', 'malformed', 'missingParts', 'parts', 'problems', 'receivedAt', 'source', 'text', 'type', 'userData',
    ]);
    expect(e).toMatchObject({
      type: 'inbound', channel: 'sms', source: '447700900555', destination: '12345', text: 'hello smppd',
      parts: 1, missingParts: [], dataCoding: 0, malformed: false, problems: [], userData: null,
    });
    expect(e.inboundId).toEqual(expect.any(Number));
    expect(new Date(e.receivedAt).toISOString()).toBe(e.receivedAt);
    expect(verifySignature(SECRET, String(inbound.headers['x-smppd-signature']), String(inbound.headers['x-smppd-event-id']), inbound.body,
      Math.floor(inbound.at / 1000))).toBe(true);

    // The other MO was stored, for no client: it was handled, and made no event.
    const db = new Database(join(d.dir, 'smppd.db'), { readonly: true, fileMustExist: true });
    cleanups.push(() => { db.close(); });
    const stored = db.prepare('SELECT COUNT(*) AS n FROM inbound');
    await until(() => (stored.get() as { n: number }).n === 2, 10_000, 'both MO stored');
    expect(db.prepare('SELECT destination, client FROM inbound ORDER BY id').all()).toEqual(expect.arrayContaining([
      { destination: '99999', client: null }, { destination: '12345', client: 'app' },
    ]));
    expect(hook.received.map((r) => (r.json as { destination?: string }).destination)).toEqual(['12345']);
  });

  it('after kill -9 with a full outbox, the daemon started again on the same store delivers every event in order', async () => {
    const { port } = await simulator({ receipts: { delayMs: 10 } });
    const hook = await receiver();
    await hook.stop(); // down for the first run: every event stays in the outbox
    const dir = tempDir();
    const configPath = join(dir, 'smppd.yaml');
    writeFileSync(configPath, configText({ smscPort: port, hook, webhook: QUICK, logLevel: 'info' }));

    const child = new JsonLinesProcess(process.execPath, [
      '--import', './test/support/ts-register.mjs', 'src/main.ts', 'start', '--config', configPath,
    ]);
    cleanups.push(() => child.kill());
    const [listening] = await child.next('http_listening', 1, 60_000);
    const first = api(Number(listening!.port));
    const sent = await sendMessages(first, 12, '4477005');
    await until(async () => (await Promise.all([...sent.keys()].map((id) => first.status(id)))).every((s) => s === 'DELIVERED'), 15_000, 'DELIVERED');
    await child.next('webhook_failing', 1, 10_000);
    child.kill();
    expect((await child.exited()).signal).toBe('SIGKILL');
    expect(hook.received).toHaveLength(0);

    await hook.restart();
    // Started again in this process (the same startDaemon, config file and store; a second
    // child would only add its start-up time). The killed process's leases must be given back.
    await inProcess(await loadConfigFile(configPath));
    await until(() => allArrived(hook.accepted, sent.keys()), 20_000, 'every event after the restart');
    const by = statusesByMessage(hook.accepted);
    for (const id of sent.keys()) expect(by.get(id), id).toEqual(FLOW);
    expect(hook.accepted).toHaveLength(3 * sent.size);
  }, 60_000);
});
