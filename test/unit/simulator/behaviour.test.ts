import { describe, expect, it } from 'vitest';
import { compileBehaviour, defaultBehaviour, mergeBehaviour, parseBehaviourPatch } from '../../../src/simulator/behaviour.js';
import { isSmppdError } from '../../../src/core/errors.js';
import { WeightedPicker } from '../../../src/simulator/weighted.js';

function sequence(values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}

describe('simulator behaviour', () => {
  it('merges receipts field by field and replaces mixes whole', () => {
    const b = mergeBehaviour(defaultBehaviour(), { receipts: { delayMs: 5 }, submitStatus: { 0x58: 1 } });
    expect(b.receipts).toMatchObject({ enabled: true, delayMs: 5, outcomes: { DELIVRD: 1 } });
    expect(b.submitStatus).toEqual({ 0x58: 1 });
  });

  it('compiles the status mix and delays', () => {
    const c = compileBehaviour(mergeBehaviour(defaultBehaviour(), {
      submitStatus: { 0: 0.75, 0x0b: 0.25 }, responseDelayMs: { min: 10, max: 20 }, throttleRatePerBind: 1000,
    }), 1);
    const random = sequence([0.1, 0.8, 0.5, 0.74999]);
    expect([1, 2, 3, 4].map(() => c.submitStatus.pick(random))).toEqual([0, 0x0b, 0, 0]);
    expect(c.responseDelay(() => 0.5)).toBe(15);
    expect(c.throttleBurst).toBe(20);
    expect(c.throttleAccountBurst).toBe(1);
    const account = compileBehaviour(mergeBehaviour(defaultBehaviour(), { throttleRatePerAccount: 500 }), 2);
    expect(account.throttleAccountBurst).toBe(10);
    expect(compileBehaviour(mergeBehaviour(account.spec, { throttleAccountBurst: 3 }), 3).throttleAccountBurst).toBe(3);
  });

  it('accepts hex keys for statuses from JSON and rejects what it cannot use, naming the key', () => {
    expect(parseBehaviourPatch(JSON.parse('{"submitStatus":{"0x58":1},"receipts":{"enabled":false}}'))).toBeTruthy();
    expect(parseBehaviourPatch({ throttleRatePerAccount: 100, throttleAccountBurst: 5 })).toEqual({ throttleRatePerAccount: 100, throttleAccountBurst: 5 });
    const bad = (input: unknown, path: string): void => {
      try {
        parseBehaviourPatch(input);
        expect.unreachable();
      } catch (e) {
        expect(isSmppdError(e, 'CONFIG_INVALID')).toBe(true);
        expect((e as Error).message).toContain(path);
      }
    };
    bad({ nope: 1 }, 'nope');
    bad({ receipts: { outcomes: { DELIVERED: 1 } } }, 'receipts.outcomes.DELIVERED');
    bad({ genericNackProbability: 2 }, 'genericNackProbability');
    bad({ responseDelayMs: { min: 5, max: 1 } }, 'responseDelayMs');
    bad({ submitStatus: { 0: 0 } }, 'submitStatus');
    bad({ receiptRouting: 'other' }, 'receiptRouting');
    bad({ throttleRatePerAccount: -5 }, 'throttleRatePerAccount');
    bad({ throttleAccountBurst: Number.NaN }, 'throttleAccountBurst');
    bad([], '(body)');
  });

  it("takes each receiptRouting: 'same', 'any' and 'other-system-type'", () => {
    for (const receiptRouting of ['same', 'any', 'other-system-type'] as const) {
      expect(parseBehaviourPatch(JSON.parse(JSON.stringify({ receiptRouting })))).toEqual({ receiptRouting });
      expect(compileBehaviour(mergeBehaviour(defaultBehaviour(), { receiptRouting }), 1).spec.receiptRouting).toBe(receiptRouting);
    }
  });

  it('a weighted picker with one weight never draws a random number', () => {
    const p = new WeightedPicker([[7, 1], [8, 0]]);
    expect(p.pick(() => { throw new Error('drew'); })).toBe(7);
    expect(p.constant).toBe(7);
  });
});
