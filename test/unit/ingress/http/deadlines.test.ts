/**
 * RequestDeadlines on a ManualClock: a request whose body is incomplete at its deadline is
 * reported once, not before; so is one whose response, written whole, its client has not read by
 * its deadline, counted from the writing; one answered and read, one still being answered, or one
 * whose connection went, never is; the sweep runs only while something is watched (an idle server
 * holds no timer).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../../src/core/clock.js';
import { RequestDeadlines, SWEEP_MS, type DeadlineLimit } from '../../../../src/ingress/http/deadlines.js';

const SHORT: DeadlineLimit = { ms: 30_000, message: 'short' };
const LONG: DeadlineLimit = { ms: 600_000, message: 'long' };

type FakeRequest = IncomingMessage & { complete: boolean; destroyed: boolean; socket: { destroyed: boolean } };
type FakeResponse = ServerResponse & { writableEnded: boolean; writableFinished: boolean };

/** The fields of a request the sweep reads. */
function request(): FakeRequest {
  return { complete: false, destroyed: false, socket: { destroyed: false } } as FakeRequest;
}
/** The fields of a response the sweep reads: not written yet. */
function answer(): FakeResponse {
  return { writableEnded: false, writableFinished: false } as FakeResponse;
}
const response = answer();

function setup() {
  const clock = new ManualClock();
  const expired: Array<{ req: IncomingMessage; limit: string; at: number; overdue: string }> = [];
  const deadlines = new RequestDeadlines(clock, (req, _res, limit, overdue) => expired.push({ req, limit: limit.message, at: clock.now(), overdue }));
  return { clock, expired, deadlines };
}

describe('RequestDeadlines', () => {
  it('reports an incomplete request at its deadline, at most two sweeps late, and only once', () => {
    const { clock, expired, deadlines } = setup();
    const req = request();
    deadlines.watch(req, response, SHORT);
    clock.advance(SHORT.ms - 1);
    expect(expired).toEqual([]);
    clock.advance(2 * SWEEP_MS + 1);
    expect(expired).toEqual([{ req, limit: 'short', at: expect.any(Number), overdue: 'body' }]);
    expect(expired[0]!.at).toBeGreaterThanOrEqual(SHORT.ms);
    expect(expired[0]!.at).toBeLessThanOrEqual(SHORT.ms + 2 * SWEEP_MS);
    clock.advance(10 * SWEEP_MS);
    expect(expired).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives each request its own limit', () => {
    const { clock, expired, deadlines } = setup();
    const short = request();
    const long = request();
    deadlines.watch(long, response, LONG);
    clock.advance(5_000);
    deadlines.watch(short, response, SHORT);
    clock.advance(SHORT.ms + 2 * SWEEP_MS);
    expect(expired.map((e) => e.req)).toEqual([short]);
    clock.advance(LONG.ms);
    expect(expired.map((e) => e.req)).toEqual([short, long]);
  });

  it('forgets a request once its body is whole and its response read, or its connection is gone; an idle server has no timer', () => {
    const { clock, expired, deadlines } = setup();
    const whole = request();
    const answered = answer();
    const gone = request();
    const closed = request();
    deadlines.watch(whole, answered, SHORT);
    deadlines.watch(gone, response, SHORT);
    deadlines.watch(closed, response, SHORT);
    expect(deadlines.watching).toBe(3);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(SWEEP_MS);
    expect(deadlines.watching).toBe(3);
    whole.complete = true;
    answered.writableEnded = true;
    answered.writableFinished = true;
    gone.destroyed = true;
    closed.socket.destroyed = true;
    clock.advance(SWEEP_MS);
    expect(deadlines.watching).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(SHORT.ms);
    expect(expired).toEqual([]);
  });

  it('reports a response its client has not read at its deadline from the writing, once; never while smppd is still answering', () => {
    const { clock, expired, deadlines } = setup();
    const req = request();
    const res = answer();
    deadlines.watch(req, res, SHORT);
    req.complete = true;
    // smppd takes long to answer: no deadline runs meanwhile.
    clock.advance(3 * SHORT.ms);
    expect(expired).toEqual([]);
    expect(deadlines.watching).toBe(1);
    // Written whole, and not read: the client has its limit from here.
    res.writableEnded = true;
    const written = clock.now();
    clock.advance(SHORT.ms - 1);
    expect(expired).toEqual([]);
    clock.advance(2 * SWEEP_MS + 1);
    expect(expired).toEqual([{ req, limit: 'short', at: expect.any(Number), overdue: 'response' }]);
    expect(expired[0]!.at - written).toBeGreaterThanOrEqual(SHORT.ms);
    expect(expired[0]!.at - written).toBeLessThanOrEqual(SHORT.ms + 2 * SWEEP_MS);
    clock.advance(10 * SWEEP_MS);
    expect(expired).toHaveLength(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('forgets a response its client reads before the deadline', () => {
    const { clock, expired, deadlines } = setup();
    const req = request();
    const res = answer();
    deadlines.watch(req, res, SHORT);
    req.complete = true;
    res.writableEnded = true;
    clock.advance(SHORT.ms - SWEEP_MS);
    res.writableFinished = true;
    clock.advance(SWEEP_MS);
    expect(deadlines.watching).toBe(0);
    clock.advance(SHORT.ms);
    expect(expired).toEqual([]);
  });

  it('one timer for any number of requests', () => {
    const { clock, deadlines } = setup();
    for (let i = 0; i < 10_000; i++) deadlines.watch(request(), response, SHORT);
    expect(clock.pendingTimers).toBe(1);
  });

  it('after stop, watches nothing and sweeps no more', () => {
    const { clock, expired, deadlines } = setup();
    deadlines.watch(request(), response, SHORT);
    deadlines.stop();
    deadlines.watch(request(), response, SHORT);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(SHORT.ms * 2);
    expect(expired).toEqual([]);
  });
});
