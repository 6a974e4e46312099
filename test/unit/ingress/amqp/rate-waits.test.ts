import { describe, expect, it } from 'vitest';
import { ClientRateLimiter } from '../../../../src/api/client-rate-limiter.js';
import { ManualClock } from '../../../../src/core/clock.js';
import { RateWaits } from '../../../../src/ingress/amqp/rate-waits.js';

function lines(perSecond: number, burst: number) {
  const clock = new ManualClock();
  const limiter = new ClientRateLimiter([{ name: 'shop', rateLimit: { perSecond, burst } }, { name: 'crm' }], clock);
  const sent: string[] = [];
  const waits = new RateWaits<string>(limiter, clock, (item) => sent.push(item));
  return { clock, limiter, sent, waits };
}

describe('RateWaits', () => {
  it('admits a client while it has tokens and nothing waiting; then it must wait', () => {
    const { waits } = lines(1, 2);
    expect([waits.admit('shop'), waits.admit('shop'), waits.admit('shop')]).toEqual([true, true, false]);
    expect(waits.admit('crm')).toBe(true); // unlimited
  });

  it('sends each line in order, one token each, with one timer for the next token', () => {
    const { clock, sent, waits } = lines(2, 1);
    for (const item of ['a', 'b', 'c']) waits.hold('shop', item);
    expect(sent).toEqual(['a']);
    expect(waits.size).toBe(2);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(500);
    expect(sent).toEqual(['a', 'b']);
    clock.advance(500);
    expect(sent).toEqual(['a', 'b', 'c']);
    expect(waits.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps a client\'s new messages behind the ones waiting or being set aside, even when a token is there', () => {
    const { waits } = lines(1, 5);
    waits.settingAside('shop');
    expect(waits.admit('shop')).toBe(false);
    waits.hold('shop', 'a'); // back from the wait queue, and sent: the line is empty again
    expect(waits.admit('shop')).toBe(true);
    waits.settingAside('shop');
    waits.setAsideFailed('shop');
    expect(waits.admit('shop')).toBe(true);
  });

  it('a new limit applies to the messages waiting at once, not after the old limit\'s timer', () => {
    const { clock, limiter, sent, waits } = lines(0.001, 1); // one token per 1,000 s
    for (const item of ['a', 'b', 'c']) waits.hold('shop', item);
    expect(sent).toEqual(['a']);
    limiter.replace([{ name: 'shop', rateLimit: { perSecond: 1000, burst: 10 } }]);
    waits.limitsChanged();
    expect(sent).toEqual(['a']); // the bucket is kept, empty: no fresh burst
    clock.advance(2);
    expect(sent).toEqual(['a', 'b', 'c']);
  });

  it('releaseAll hands back every waiting item and stops the timers', () => {
    const { clock, sent, waits } = lines(1, 1);
    for (const item of ['a', 'b', 'c']) waits.hold('shop', item);
    expect(waits.releaseAll()).toEqual(['b', 'c']);
    expect(waits.size).toBe(0);
    clock.advance(10_000);
    expect(sent).toEqual(['a']);
  });
});
