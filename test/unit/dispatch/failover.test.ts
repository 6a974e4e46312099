import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { WarningThrottle } from '../../../src/core/warning-throttle.js';
import { MessageComposer, partBodies, type ComposeSettings, type OutgoingMessage } from '../../../src/dispatch/compose.js';
import { Failover } from '../../../src/dispatch/failover.js';
import { RouteTable, type RouteSpec } from '../../../src/dispatch/route-table.js';
import { Router } from '../../../src/dispatch/router.js';
import { UpstreamAvailability } from '../../../src/dispatch/upstream-availability.js';
import type { MessageMove, MessageRerouting, MovableMessage } from '../../../src/store/rerouting.js';
import { recordingLog } from '../../support/http.js';

const GSM: ComposeSettings = { defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true };
const LATIN: ComposeSettings = { ...GSM, defaultAlphabet: 'latin1', longMessages: 'sar', requestReceipts: false };
/** Takes one part only: a long message cannot move to it. */
const SHORT: ComposeSettings = { ...GSM, maxParts: 1 };
const SETTINGS: Record<string, ComposeSettings> = { x: GSM, y: LATIN, z: SHORT, w: GSM };
/** Every composer starts its concatenation references here, so a test can compose the same parts. */
const FIRST_REFERENCE = 7;

const FAILOVER_AFTER_MS = 1_000;
const ROUTES: RouteSpec[] = [
  { name: 'uk', prefixes: ['44'], upstreams: ['x', 'y'], strategy: 'failover', weights: [1, 1] },
  { name: 'de', prefixes: ['49'], upstreams: ['x', 'z'], strategy: 'failover', weights: [1, 1] },
  { name: 'fr', prefixes: ['33'], upstreams: ['x'], strategy: 'failover', weights: [1] },
  { name: 'us', prefixes: ['1'], upstreams: ['x', 'y', 'w'], strategy: 'weighted', weights: [1, 1, 1] },
];

/** A long text with characters GSM-7 and Latin-1 write differently (é is septet 0x05, byte 0xE9). */
const LONG = `${'Grüße aus Köln, café à la crème. '.repeat(7)}fin`;

let nextId = 0;
function message(destination: string, o: Partial<MovableMessage> = {}): MovableMessage {
  nextId++;
  return {
    id: `m${nextId}`, client: 'app', upstream: 'x', route: null, source: 'Shop', destination, text: 'hello',
    messageType: 'TEXT', validityPeriod: '', attempts: 0, seq: nextId, ...o,
  };
}

/** A store of queued messages: `movable` gives the oldest on an upstream, `move` moves those still there (unless `taken`). */
function fakeStore(messages: MovableMessage[]) {
  const moves: MessageMove[][] = [];
  const movableCalls: Array<[string, number, number]> = [];
  /** Ids a claim took before the move: the store leaves them. */
  const taken = new Set<string>();
  const store: MessageRerouting = {
    async movable(upstream, limit, _now, after = 0) {
      movableCalls.push([upstream, limit, after]);
      return messages.filter((m) => m.upstream === upstream && m.seq > after).slice(0, limit).map((m) => ({ ...m }));
    },
    async move(batch) {
      moves.push([...batch]);
      const moved: string[] = [];
      for (const mv of batch) {
        const m = messages.find((q) => q.id === mv.id);
        if (!m || m.upstream !== mv.from || taken.has(m.id)) continue;
        m.upstream = mv.upstream;
        moved.push(m.id);
      }
      return moved;
    },
  };
  return { store, moves, movableCalls, taken, on: (u: string) => messages.filter((m) => m.upstream === u).map((m) => m.id) };
}

/**
 * A Failover over `messages` with upstreams x, y, z, w (this instance has binds to `mine`), all
 * bound except `down`, which have been unavailable for `downMs`.
 */
function rig(messages: MovableMessage[], o: { down?: string[]; downMs?: number; mine?: string[]; batch?: number } = {}) {
  const clock = new ManualClock();
  const names = ['x', 'y', 'z', 'w'];
  const availability = new UpstreamAvailability(clock, names.map((name) => ({ name, binds: 1, failoverAfterMs: FAILOVER_AFTER_MS })));
  const down = new Set(o.down ?? ['x']);
  for (const u of names) if (!down.has(u)) availability.bindState(u, `${u}#0`, 'bound');
  clock.advance(o.downMs ?? FAILOVER_AFTER_MS);
  const router = new Router(new RouteTable(ROUTES), availability);
  const composers = new Map(names.map((u) => [u, new MessageComposer(SETTINGS[u]!, FIRST_REFERENCE)]));
  const s = fakeStore(messages);
  const withdrawn: string[] = [];
  const lines: string[] = [];
  const counted: string[] = [];
  let wakes = 0;
  const failover = new Failover({
    store: s.store, availability, router, clock, log: recordingLog(lines), warnings: new WarningThrottle(clock, 60_000),
    pool: { withdrawUnstarted: (u) => { withdrawn.push(u); return u === 'x' ? 3 : 0; } },
    compose: (u, m) => composers.get(u)!.compose({ ...m, destination: '' }),
    upstreams: o.mine ?? names,
    counters: { failoverMoved: (from, to, n) => counted.push(`${from}->${to}:${n}`) },
    onMoved: () => { wakes++; },
    ...(o.batch !== undefined ? { batch: o.batch } : {}),
  });
  const events = (event: string) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === event);
  return { clock, availability, failover, withdrawn, counted, events, wakes: () => wakes, ...s };
}

/** `m` composed afresh for `settings`, as a move carries it. */
function composedFor(settings: ComposeSettings, m: Pick<OutgoingMessage, 'source' | 'text' | 'messageType'>) {
  return new MessageComposer(settings, FIRST_REFERENCE).compose({ ...m, destination: '' });
}

describe('Failover.run', () => {
  it('does nothing while no upstream has been unavailable for its failoverAfterSeconds', async () => {
    const r = rig([message('447700900001')], { downMs: FAILOVER_AFTER_MS - 1 });
    await r.failover.run();
    expect(r.withdrawn).toEqual([]);
    expect(r.movableCalls).toEqual([]);
    expect(r.on('x')).toEqual(['m' + String(nextId)]);
  });

  it('a failed-over upstream: the pool gives back what waits for its binds, then its queued messages move to the next available upstream of their route', async () => {
    const a = message('447700900001');
    const b = message('447700900002');
    const r = rig([a, b]);
    await r.failover.run();
    expect(r.withdrawn).toEqual(['x']);
    expect(r.events('failover_withdrawn')).toEqual([expect.objectContaining({ upstream: 'x', messages: 3 })]);
    expect(r.on('y')).toEqual([a.id, b.id]);
    expect(r.on('x')).toEqual([]);
    expect(r.counted).toEqual(['x->y:2']);
    expect(r.events('failover_moved')).toEqual([expect.objectContaining({ from: 'x', to: 'y', messages: 2 })]);
    expect(r.wakes()).toBe(1);
    // Another run finds nothing more to move.
    await r.failover.run();
    expect(r.moves).toHaveLength(1);
    expect(r.counted).toEqual(['x->y:2']);
  });

  it('a message is composed again for its new upstream: its alphabet, long-message mode and receipt request, never the old bytes', async () => {
    const m = message('447700900001', { text: LONG });
    const r = rig([m]);
    await r.failover.run();
    const [move] = r.moves.flat();
    const expected = composedFor(LATIN, m);
    expect(move).toEqual({
      id: m.id, from: 'x', upstream: 'y', encoding: 'GSM-7', registeredDelivery: 0, sourceTon: 5, sourceNpi: 0, parts: partBodies(expected),
    });
    // Latin-1 bytes in SAR parts: the text reads back from the parts' bodies as it was written.
    expect(move!.parts.length).toBeGreaterThan(1);
    expect(move!.parts.every((p) => p.sar !== undefined && p.esmClass === 0)).toBe(true);
    expect(Buffer.concat(move!.parts.map((p) => p.shortMessage)).toString('latin1')).toBe(LONG);
    // What the GSM-7 upstream had would have been other bytes.
    expect(partBodies(composedFor(GSM, m))[0]!.shortMessage.equals(move!.parts[0]!.shortMessage)).toBe(false);
  });

  it('the route stored with the message decides, while the configuration has it; else the route its number takes now', async () => {
    // Stored on route 'uk' but a German number: it follows 'uk' (x -> y), not 'de' (x -> z).
    const onUk = message('491701234567', { route: 'uk' });
    // A route the configuration no longer has, and one stored before routes were kept: by number.
    const gone = message('491701234568', { route: 'removed' });
    const old = message('447700900003', { route: null });
    const r = rig([onUk, gone, old]);
    await r.failover.run();
    expect(r.on('y')).toEqual([onUk.id, old.id]);
    expect(r.on('z')).toEqual([gone.id]);
    expect(r.counted.sort()).toEqual(['x->y:2', 'x->z:1']);
  });

  it('a message whose route has no other upstream available, or no route at all, stays; a warning names the unrouted one', async () => {
    const fr = message('33612345678');
    const unrouted = message('15551234567', { client: 'app', destination: '8612345678' });
    const uk = message('447700900001');
    const r = rig([fr, unrouted, uk], { down: ['x', 'y'] });
    await r.failover.run();
    // uk's y is down too: nothing of x moves but what 'us' would take (w), and it has no message.
    expect(r.on('x')).toEqual([fr.id, unrouted.id, uk.id]);
    expect(r.moves).toEqual([]);
    expect(r.events('failover_no_route')).toEqual([expect.objectContaining({ level: 'warn', upstream: 'x', messageId: unrouted.id })]);
    expect(r.wakes()).toBe(0);
  });

  it('a message whose text the next upstream cannot carry stays, with a warning; the others move', async () => {
    const long = message('491701234567', { text: LONG });
    const short = message('491701234568', { text: 'short' });
    const r = rig([long, short]);
    await r.failover.run();
    expect(r.on('x')).toEqual([long.id]);
    expect(r.on('z')).toEqual([short.id]);
    expect(r.events('failover_not_composable')).toEqual([expect.objectContaining({ level: 'warn', from: 'x', to: 'z', messageId: long.id })]);
  });

  it('a message a claim took before the move is not counted as moved', async () => {
    const a = message('447700900001');
    const b = message('447700900002');
    const r = rig([a, b]);
    r.taken.add(a.id);
    await r.failover.run();
    expect(r.moves.flat().map((m) => m.id)).toEqual([a.id, b.id]);
    expect(r.on('y')).toEqual([b.id]);
    expect(r.counted).toEqual(['x->y:1']);
  });

  it('a weighted route spreads the moved messages over its available upstreams other than the failed one', async () => {
    const messages = Array.from({ length: 6 }, (_, i) => message(`1555000000${i}`));
    const r = rig(messages);
    await r.failover.run();
    expect(r.on('y')).toHaveLength(3);
    expect(r.on('w')).toHaveLength(3);
    expect(r.counted.sort()).toEqual(['x->w:3', 'x->y:3']);
  });

  it('a backlog moves a batch a commit, at most 20 commits a run; the rest in the next runs', async () => {
    const messages = Array.from({ length: 45 }, (_, i) => message(`4477009${String(i).padStart(5, '0')}`));
    const r = rig(messages, { batch: 2 });
    await r.failover.run();
    expect(r.moves).toHaveLength(20);
    expect(r.moves.every((m) => m.length === 2)).toBe(true);
    expect(r.on('y')).toHaveLength(40);
    expect(r.movableCalls.every(([u, limit]) => u === 'x' && limit === 2)).toBe(true);
    await r.failover.run();
    expect(r.on('y')).toHaveLength(45);
    expect(r.on('x')).toHaveLength(0);
  });

  it('reads past messages that stay: those behind them move in the same run', async () => {
    // Route fr has only x: its messages cannot move, and fill the first pages.
    const messages = [...Array.from({ length: 4 }, (_, i) => message(`3361234500${i}`)), message('447700900001')];
    const r = rig(messages, { batch: 2 });
    await r.failover.run();
    expect(r.on('y')).toEqual([messages[4]!.id]);
    expect(r.on('x')).toHaveLength(4);
    expect(r.movableCalls.map(([, , after]) => after)).toEqual([0, messages[1]!.seq, messages[3]!.seq]);
  });

  it('a run reads on where the last one stopped: more unmovable messages than a run reads never block those behind', async () => {
    // 45 of route fr (x only) fill more than a run's 20 reads of 2; the uk one behind them moves in the second run.
    const messages = [...Array.from({ length: 45 }, (_, i) => message(`336123${String(i).padStart(5, '0')}`)), message('447700900001')];
    const r = rig(messages, { batch: 2 });
    await r.failover.run();
    expect(r.on('y')).toEqual([]);
    await r.failover.run();
    expect(r.on('y')).toEqual([messages[45]!.id]);
    // The read that reached the end starts the next run from the head again.
    await r.failover.run();
    expect(r.movableCalls.at(-20)?.[2]).toBe(0);
  });

  it('with no other upstream available on any of its routes, the pool keeps what it holds', async () => {
    const r = rig([message('447700900001')], { down: ['x', 'y', 'z', 'w'] });
    await r.failover.run();
    expect(r.withdrawn).toEqual([]);
    expect(r.movableCalls).toEqual([]);
  });

  it('an upstream this instance has no binds to is not its to move, even when it counts as failed over here', async () => {
    const r = rig([message('447700900001')], { mine: ['y', 'z', 'w'] });
    expect(r.availability.failedOver('x')).toBe(true);
    await r.failover.run();
    expect(r.withdrawn).toEqual([]);
    expect(r.movableCalls).toEqual([]);
  });

  it('an upstream that came back is left alone, and its messages stay', async () => {
    const m = message('447700900001');
    const r = rig([m]);
    r.availability.bindState('x', 'x#0', 'bound');
    await r.failover.run();
    expect(r.withdrawn).toEqual([]);
    expect(r.on('x')).toEqual([m.id]);
  });
});
