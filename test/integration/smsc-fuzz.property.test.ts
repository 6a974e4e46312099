/**
 * Random and mutated bytes into the PDU reader never escape the session: each request gets its
 * answer or generic_nack under its own sequence number, a bad command_length resets the link, a
 * response is never answered, and the process goes on serving. Over real sockets, both ways:
 * a raw fake SMSC writes hostile frames to smppd's bind (its deliveries on a real SQLite store),
 * and a raw ESME writes them to the simulator. Seeded: every run tries the same cases, and
 * fast-check prints the seed and path of a failure to replay it.
 */
import net from 'node:net';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { Deliveries } from '../../src/dispatch/deliveries.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import type { Pool } from '../../src/smpp/pool.js';
import { makePool, part } from '../support/engine.js';
import { FakeLink, FakeSmsc } from '../support/fake-smsc.js';
import { recordingLog } from '../support/http.js';
import { PduBytes } from '../support/pdu-bytes.js';
import {
  ENQUIRE_LINK, frameStream, GENERIC_NACK, hostileStream, isResponse, NACK_STATUSES, numbered, UNBIND, V34_COMMANDS,
} from '../support/smpp-fuzz.js';
import { storeFolder } from '../support/sqlite-store.js';

const SEED = 0x22e5;
const clock = new SystemClock();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** What the cases did, so a generator that stopped reaching a branch fails the test instead of passing it by. */
interface Coverage {
  cases: number;
  resets: number;
  partial: number;
  nacks: number;
  answered: number;
  unbinds: number;
}

/**
 * Writes one case of hostile frames to `link` and checks what the reader on the other side did
 * with them. `next` numbers the frames (no two alike, none like the peer's own requests).
 */
async function checkCase(link: FakeLink, frames: Buffer[], next: () => number, seen: Coverage): Promise<void> {
  const before = link.seen.length;
  const bytes = numbered(frames, next);
  const framed = frameStream(bytes);
  // A last enquire_link, when the stream is whole: once it is answered, everything before it was read.
  const sentinel = !framed.badLength && !framed.partial ? next() : undefined;
  link.write(sentinel === undefined ? bytes : Buffer.concat([bytes, new PduBytes(ENQUIRE_LINK, sentinel).build()]));

  const requests = framed.frames.filter((f) => !isResponse(f.commandId));
  const asked = (seq: number) => requests.filter((r) => r.sequenceNumber === seq);
  const answers = () => link.seen.slice(before).filter((p) => isResponse(p.commandId));
  const answeredEach = (): boolean => {
    const got = answers();
    return requests.every((r) => got.filter((a) => a.sequenceNumber === r.sequenceNumber).length >= asked(r.sequenceNumber).length)
      && (sentinel === undefined || got.some((a) => a.sequenceNumber === sentinel));
  };
  await link.waitFor(() => link.closed || (!framed.badLength && answeredEach()), 5_000);

  const got = answers();
  const unbound = got.some((a) => a.commandId === 0x80000006);
  if (framed.badLength) expect(link.closed, 'a bad command_length resets the link').toBe(true);
  if (link.closed) {
    // Only a bad length or an unbind ends the link: never a bad body.
    expect(framed.badLength || unbound, `the link closed after ${bytes.toString('hex')}`).toBe(true);
  } else {
    expect(answeredEach(), `a request went unanswered in ${bytes.toString('hex')}`).toBe(true);
  }
  for (const a of got) {
    if (a.sequenceNumber === sentinel) {
      expect(a.commandId).toBe(0x80000015);
      continue;
    }
    // An answer answers a request of this case, under its sequence number, once.
    const to = asked(a.sequenceNumber);
    expect(to.length, `an answer to no request: ${JSON.stringify(a)} after ${bytes.toString('hex')}`).toBeGreaterThan(0);
    expect(got.filter((b) => b.sequenceNumber === a.sequenceNumber).length).toBeLessThanOrEqual(to.length);
    expect([GENERIC_NACK, ...to.map((r) => (r.commandId | 0x80000000) >>> 0)]).toContain(a.commandId);
    if (a.commandId === GENERIC_NACK) {
      expect(NACK_STATUSES.has(a.status), `generic_nack status ${a.status}`).toBe(true);
      seen.nacks++;
    } else {
      seen.answered++;
    }
    // SMPP v3.4 §5.1.3: a command id that is no v3.4 command is ESME_RINVCMDID.
    if (to.every((r) => !V34_COMMANDS.has(r.commandId))) expect(a).toMatchObject({ commandId: GENERIC_NACK, status: 0x03 });
  }
  seen.cases++;
  if (framed.badLength) seen.resets++;
  if (unbound) seen.unbinds++;
  if (framed.partial && !link.closed) {
    // Declared longer than sent: the reader waits for the rest, which this SMSC never sends.
    seen.partial++;
    link.destroy();
  }
}

const coverage = (): Coverage => ({ cases: 0, resets: 0, partial: 0, nacks: 0, answered: 0, unbinds: 0 });

describe('random and mutated bytes into the PDU reader never escape the session', () => {
  it('smppd\'s bind: answers or nacks each request under its number, resets on a bad length, reconnects, logs each kind once, and still sends', async () => {
    const smsc = await FakeSmsc.start();
    cleanups.push(() => smsc.stop());
    const folder = storeFolder();
    cleanups.push(() => folder.cleanup());
    const store = await folder.open();
    const deliveries = new Deliveries({ store, clock, log: silentLog, upstreams: [{ name: 'sim', defaultAlphabet: 'gsm7', receiptIdFormat: 'auto', smscTimeZone: 'UTC' }] });
    const lines: string[] = [];
    const pool: Pool = makePool({ port: smsc.port }, clock, { log: recordingLog(lines), deliver: deliveries.handle });
    pool.start();
    cleanups.push(() => pool.stop(100));

    let seq = 0x10000000;
    const next = (): number => ++seq;
    const seen = coverage();
    await fc.assert(
      fc.asyncProperty(hostileStream, async (frames) => checkCase(await smsc.boundLink(), frames, next, seen)),
      { seed: SEED, numRuns: 150, endOnFailure: true },
    );
    // The cases reached every way a PDU can go wrong.
    expect(seen.resets).toBeGreaterThanOrEqual(10);
    expect(seen.partial).toBeGreaterThanOrEqual(5);
    expect(seen.nacks).toBeGreaterThanOrEqual(30);
    expect(seen.answered).toBeGreaterThanOrEqual(30);

    // Still serving: it binds again and a message goes out.
    const link = await smsc.boundLink();
    const outcome = await pool.submit('sim', [part('4915112345678')]);
    expect(outcome.parts).toEqual([expect.objectContaining({ kind: 'accepted' })]);
    expect(link.submits).toBe(1);
    expect(smsc.links.length).toBeGreaterThan(seen.resets);

    // Hundreds of bad PDUs, one bind, a minute's interval: each kind of warning said once (its count at the stop).
    await pool.stop(100);
    const warnings = lines.map((l) => JSON.parse(l) as { level: string; event?: string; repeated?: number })
      .filter((l) => l.level === 'warn' && l.event !== undefined);
    const byEvent = new Map<string, typeof warnings>();
    for (const w of warnings) byEvent.set(w.event!, [...(byEvent.get(w.event!) ?? []), w]);
    expect(byEvent.get('malformed_pdu')?.length).toBeGreaterThanOrEqual(1);
    expect(byEvent.get('bind_down')?.length).toBeGreaterThanOrEqual(1);
    for (const [event, said] of byEvent) {
      expect(said.length, `${event} logged ${said.length} times`).toBeLessThanOrEqual(2);
      if (said.length === 2) expect(said[1]!.repeated).toBeGreaterThan(0);
    }
  }, 120_000);

  it('the simulator: answers or nacks each request under its number, resets on a bad length, and still serves an ESME', async () => {
    const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }] }, clock, silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    let current: FakeLink | undefined;
    const links: FakeLink[] = [];
    cleanups.push(() => { for (const l of links) l.socket.destroy(); });
    /** The raw ESME's bound link, connecting and binding again after a reset. */
    const boundLink = async (): Promise<FakeLink> => {
      if (current && !current.closed) return current;
      const socket = net.connect({ host: '127.0.0.1', port });
      await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const link = new FakeLink(socket);
      links.push(link);
      link.write(new PduBytes(0x00000009, 1).cstr('smppclient1').cstr('password').cstr('').u8(0x34).u8(0).u8(0).cstr('').build());
      expect(await link.waitFor(() => link.seen.some((p) => p.commandId === 0x80000009 && p.status === 0), 5_000)).toBe(true);
      current = link;
      return link;
    };

    let seq = 0x10000000;
    const next = (): number => ++seq;
    const seen = coverage();
    await fc.assert(
      fc.asyncProperty(hostileStream, async (frames) => {
        // An ESME that sent unbind gets unbind_resp and the link ends: covered on smppd's side.
        const withoutUnbind = frames.filter((f) => f.length < 8 || f.readUInt32BE(4) !== UNBIND);
        if (withoutUnbind.length > 0) await checkCase(await boundLink(), withoutUnbind, next, seen);
      }),
      { seed: SEED + 1, numRuns: 150, endOnFailure: true },
    );
    expect(seen.resets).toBeGreaterThanOrEqual(10);
    expect(seen.nacks).toBeGreaterThanOrEqual(30);
    expect(sim.counters().totals.malformedReceived).toBeGreaterThan(0);

    const pool = makePool({ port }, clock);
    pool.start();
    cleanups.push(() => pool.stop(100));
    expect((await pool.submit('sim', [part('4915112345678')])).parts).toEqual([expect.objectContaining({ kind: 'accepted' })]);
  }, 120_000);
});
