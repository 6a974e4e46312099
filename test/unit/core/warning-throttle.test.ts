import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { WarningThrottle } from '../../../src/core/warning-throttle.js';
import { recordingLog } from '../../support/http.js';

function setup(intervalMs = 60_000) {
  const clock = new ManualClock();
  const lines: string[] = [];
  const log = recordingLog(lines);
  const throttle = new WarningThrottle(clock, intervalMs);
  const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { clock, log, throttle, parsed };
}

describe('WarningThrottle', () => {
  it('logs the first of a kind at once with its details, counts the repeats, and tells the count with the last one\'s details when the interval ends', () => {
    const { clock, log, throttle, parsed } = setup();
    for (let seq = 1; seq <= 1_000; seq++) {
      throttle.warn(log, 'malformed_pdu@sim#0', { event: 'malformed_pdu', sequenceNumber: seq }, 'malformed PDU from SMSC');
      clock.advance(10);
    }
    // 1,000 PDUs in 10 s: one line so far.
    expect(parsed()).toEqual([{ level: 'warn', event: 'malformed_pdu', sequenceNumber: 1, msg: 'malformed PDU from SMSC' }]);
    clock.advance(50_000);
    expect(parsed()).toHaveLength(2);
    expect(parsed()[1]).toEqual({
      level: 'warn', event: 'malformed_pdu', sequenceNumber: 1_000, repeated: 999, intervalSeconds: 60,
      msg: 'malformed PDU from SMSC (999 more in the last 60 s; details of the last)',
    });
    expect(clock.pendingTimers).toBe(0);
  });

  it('a kind that goes on is one line per interval; after a quiet interval the next is logged at once again', () => {
    const { clock, log, throttle, parsed } = setup(1_000);
    for (let i = 0; i < 350; i++) {
      throttle.warn(log, 'k', { n: i }, 'again');
      clock.advance(10);
    }
    // t = 0 at once, then a count at 1 s, 2 s, 3 s (each of the 100 in that second), the last 50 at 4 s.
    clock.advance(5_000);
    expect(parsed().map((l) => l['repeated'] ?? 'first')).toEqual(['first', 99, 100, 100, 50]);
    throttle.warn(log, 'k', { n: 'later' }, 'again');
    expect(parsed().at(-1)).toEqual({ level: 'warn', n: 'later', msg: 'again' });
  });

  it('holds errors back as it holds warnings: one line at once, the repeats counted at the error level', () => {
    const { clock, log, throttle, parsed } = setup();
    const upstream = throttle.scoped(log, 'sim');
    for (let i = 0; i < 100; i++) upstream.error('submit_internal_error', { event: 'submit_internal_error', n: i }, 'bug');
    expect(parsed()).toEqual([{ level: 'error', event: 'submit_internal_error', n: 0, msg: 'bug' }]);
    clock.advance(60_000);
    expect(parsed()[1]).toMatchObject({ level: 'error', n: 99, repeated: 99 });
  });

  it('counts each kind, and each scope of a kind, apart', () => {
    const { log, throttle, parsed } = setup();
    const bind0 = throttle.scoped(log, 'sim#0');
    const bind1 = throttle.scoped(log, 'sim#1');
    for (let i = 0; i < 10; i++) {
      bind0.warn('malformed_pdu', { bind: 0 }, 'malformed');
      bind1.warn('malformed_pdu', { bind: 1 }, 'malformed');
      bind0.warn('unexpected_response', { bind: 0 }, 'unexpected');
      throttle.info(log, 'parked_age@sim', { n: i }, 'aged out');
    }
    expect(parsed().map((l) => `${l['level']} ${l['msg']} ${l['bind'] ?? l['n']}`)).toEqual([
      'warn malformed 0', 'warn malformed 1', 'warn unexpected 0', 'info aged out 0',
    ]);
  });

  it('an interval of 0 logs every occurrence and holds nothing', () => {
    const { clock, log, throttle, parsed } = setup(0);
    for (let i = 0; i < 5; i++) throttle.warn(log, 'k', { i }, 'each');
    expect(parsed()).toHaveLength(5);
    expect(clock.pendingTimers).toBe(0);
  });

  it('close tells what was counted, leaves no timer, and later warnings go out at once', () => {
    const { clock, log, throttle, parsed } = setup();
    for (let i = 0; i < 4; i++) throttle.warn(log, 'k', { i }, 'w');
    expect(clock.pendingTimers).toBe(1);
    throttle.close();
    expect(clock.pendingTimers).toBe(0);
    expect(parsed().map((l) => l['repeated'] ?? 'first')).toEqual(['first', 3]);
    throttle.warn(log, 'k', { i: 'after' }, 'w');
    throttle.warn(log, 'k', { i: 'after' }, 'w');
    expect(parsed()).toHaveLength(4);
  });

  it('stays bounded when the code makes more kinds than it tracks: the excess share one', () => {
    const { log, throttle, parsed } = setup();
    for (let i = 0; i < 5_000; i++) throttle.warn(log, `kind${i}`, { i }, 'w');
    expect(parsed()).toHaveLength(1_001);
  });

  it('when it tracks all it may, drops the kinds whose interval ended (at most once per interval) before new kinds share one', () => {
    const { clock, log, throttle, parsed } = setup(1_000);
    const said = (): unknown[] => parsed().map((l) => l['k']);
    // Each once: no repeats, so no timer ever runs to drop them.
    for (let i = 0; i < 999; i++) throttle.warn(log, `a${i}`, { k: `a${i}` }, 'w');
    clock.advance(500);
    throttle.warn(log, 'b', { k: 'b' }, 'w');
    expect(clock.pendingTimers).toBe(0);
    clock.advance(500);
    // The a's intervals are over: a new kind drops them and is told as its own, and so is the next.
    throttle.warn(log, 'c', { k: 'c' }, 'w');
    throttle.warn(log, 'd', { k: 'd' }, 'w');
    expect(said().slice(1_000)).toEqual(['c', 'd']);
    // Full again within the same interval: b's is over at 1,500, but the map is not swept again
    // before 2,000, so the new kinds share one (the first told, the next counted).
    for (let i = 0; i < 997; i++) throttle.warn(log, `e${i}`, { k: `e${i}` }, 'w');
    clock.advance(600);
    throttle.warn(log, 'f', { k: 'f' }, 'w');
    throttle.warn(log, 'g', { k: 'g' }, 'w');
    expect(said().slice(1_999)).toEqual(['f']);
    clock.advance(400);
    throttle.warn(log, 'h', { k: 'h' }, 'w');
    expect(said().slice(2_000)).toEqual(['h']);
    throttle.warn(log, 'i', { k: 'i' }, 'w');
    expect(said().slice(2_000)).toEqual(['h', 'i']);
  });
});
