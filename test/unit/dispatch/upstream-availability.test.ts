import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { UpstreamAvailability } from '../../../src/dispatch/upstream-availability.js';

/** Two upstreams: `a` with two binds, failing over after 10 s; `b` with one, after 2 s. */
function rig() {
  const clock = new ManualClock(1_000);
  const availability = new UpstreamAvailability(clock, [
    { name: 'a', binds: 2, failoverAfterMs: 10_000 },
    { name: 'b', binds: 1, failoverAfterMs: 2_000 },
  ]);
  const changes: string[] = [];
  const unsubscribe = availability.onChange((u, available) => changes.push(`${u}:${available ? 'up' : 'down'}`));
  return { clock, availability, changes, unsubscribe };
}

describe('UpstreamAvailability', () => {
  it('from start-up until a bind is bound, an upstream is unavailable, and fails over its failoverAfterSeconds after the start', () => {
    const { clock, availability } = rig();
    expect(availability.available('a')).toBe(false);
    expect(availability.failedOver('a')).toBe(false);
    expect(availability.failsOverInMs('a')).toBe(10_000);
    clock.advance(9_999);
    expect(availability.failedOver('a')).toBe(false);
    expect(availability.failsOverInMs('a')).toBe(1);
    clock.advance(1);
    expect(availability.failedOver('a')).toBe(true);
    expect(availability.failsOverInMs('a')).toBe(0);
    expect(availability.failedOver('b')).toBe(true);
  });

  it('is available while at least one bind is bound: one of two down changes nothing, both down does', () => {
    const { availability, changes } = rig();
    availability.bindState('a', 'a#0', 'bound');
    expect(availability.available('a')).toBe(true);
    expect(availability.failsOverInMs('a')).toBeUndefined();
    availability.bindState('a', 'a#1', 'bound');
    availability.bindState('a', 'a#0', 'connecting');
    expect(availability.available('a')).toBe(true);
    availability.bindState('a', 'a#1', 'stopped'); // stopped for bad credentials: never bound again
    expect(availability.available('a')).toBe(false);
    expect(changes).toEqual(['a:up', 'a:down']);
  });

  it('the failover clock starts when the last bind goes down, and a bind coming back clears it', () => {
    const { clock, availability } = rig();
    availability.bindState('b', 'b#0', 'bound');
    clock.advance(60_000);
    expect(availability.failedOver('b')).toBe(false);
    availability.bindState('b', 'b#0', 'closed');
    expect(availability.failsOverInMs('b')).toBe(2_000);
    clock.advance(1_500);
    expect(availability.failedOver('b')).toBe(false);
    expect(availability.failsOverInMs('b')).toBe(500);
    clock.advance(500);
    expect(availability.failedOver('b')).toBe(true);
    availability.bindState('b', 'b#0', 'bound');
    expect(availability.failedOver('b')).toBe(false);
    expect(availability.available('b')).toBe(true);
    // Down again: counted afresh from now.
    availability.bindState('b', 'b#0', 'connecting');
    expect(availability.failedOver('b')).toBe(false);
    expect(availability.failsOverInMs('b')).toBe(2_000);
  });

  it('a state repeated, or a bind bound twice, tells listeners nothing', () => {
    const { availability, changes } = rig();
    availability.bindState('a', 'a#0', 'bound');
    availability.bindState('a', 'a#0', 'bound');
    availability.bindState('a', 'a#1', 'bound');
    availability.bindState('b', 'b#0', 'connecting');
    availability.bindState('b', 'b#0', 'closed');
    expect(changes).toEqual(['a:up']);
  });

  it('listeners hear every change of availability until they unsubscribe', () => {
    const { availability, changes, unsubscribe } = rig();
    availability.bindState('b', 'b#0', 'bound');
    availability.bindState('b', 'b#0', 'closed');
    unsubscribe();
    availability.bindState('b', 'b#0', 'bound');
    expect(changes).toEqual(['b:up', 'b:down']);
  });

  it('an upstream this instance does not know is never available and never fails over; its binds\' states are ignored', () => {
    const { availability, changes } = rig();
    availability.bindState('x', 'x#0', 'bound');
    expect(availability.has('x')).toBe(false);
    expect(availability.has('a')).toBe(true);
    expect(availability.available('x')).toBe(false);
    expect(availability.failedOver('x')).toBe(false);
    expect(availability.failsOverInMs('x')).toBeUndefined();
    expect(changes).toEqual([]);
  });

  it('view: each upstream with its binds bound, whole seconds unavailable and whether it has failed over', () => {
    const { clock, availability } = rig();
    availability.bindState('a', 'a#0', 'bound');
    clock.advance(2_500);
    expect(availability.view()).toEqual([
      { name: 'a', available: true, bound: 1, binds: 2, unavailableSeconds: 0, failedOver: false, suspended: false },
      { name: 'b', available: false, bound: 0, binds: 1, unavailableSeconds: 2, failedOver: true, suspended: false },
    ]);
  });

  it('a suspended upstream is unavailable and failed over at once, whatever its binds; resumed, it is available again', () => {
    const { availability, changes } = rig();
    availability.bindState('a', 'a#0', 'bound');
    availability.setSuspended('a', true);
    expect(availability.available('a')).toBe(false);
    expect(availability.failedOver('a')).toBe(true);
    expect(availability.failsOverInMs('a')).toBe(0);
    expect(availability.view()[0]).toMatchObject({ name: 'a', available: false, bound: 1, failedOver: true, suspended: true });
    // Its binds going up and down while suspended change nothing routing sees.
    availability.bindState('a', 'a#1', 'bound');
    availability.bindState('a', 'a#0', 'backoff');
    availability.setSuspended('a', true);
    availability.setSuspended('a', false);
    expect(availability.available('a')).toBe(true);
    expect(availability.failedOver('a')).toBe(false);
    expect(changes).toEqual(['a:up', 'a:down', 'a:up']);
    // Suspended while down: no change to tell; resumed while down: none either.
    availability.bindState('a', 'a#1', 'backoff');
    availability.setSuspended('a', true);
    availability.setSuspended('a', false);
    expect(changes).toEqual(['a:up', 'a:down', 'a:up', 'a:down']);
  });
});
