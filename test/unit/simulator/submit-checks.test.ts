import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { submitSmDefaults, type SubmitSmPdu } from '../../../src/smpp/pdu.js';
import { compileBehaviour, defaultBehaviour, mergeBehaviour, type BehaviourPatch, type CompiledBehaviour } from '../../../src/simulator/behaviour.js';
import { SubmitChecks, SubmitThrottle } from '../../../src/simulator/submit-checks.js';

const THROTTLED = 0x58;
const pdu: SubmitSmPdu = { ...submitSmDefaults(), sequenceNumber: 1, sourceAddr: 'Acme', destinationAddr: '4915112345678', dataCoding: 0, shortMessage: Buffer.from('x') };
const noRandom = (): number => { throw new Error('drew'); };

/** Compiles behaviour changes in turn, each a new version, as setBehaviour does. */
class Behaviour {
  #compiled = compileBehaviour(defaultBehaviour(), 0);
  get current(): CompiledBehaviour {
    return this.#compiled;
  }
  set(patch: BehaviourPatch): void {
    this.#compiled = compileBehaviour(mergeBehaviour(this.#compiled.spec, patch), this.#compiled.version + 1);
  }
}

/** How many of `n` submit_sm sent at `now` pass, and how many are throttled. */
function submit(checks: SubmitChecks, b: Behaviour, n: number, now: number): { ok: number; throttled: number } {
  let ok = 0;
  let throttled = 0;
  for (let i = 0; i < n; i++) {
    const status = checks.refusal(pdu, 'transceiver', b.current, noRandom, now);
    if (status === 0) ok++;
    else if (status === THROTTLED) throttled++;
  }
  return { ok, throttled };
}

describe("the simulator's per-account throttle", () => {
  it('shares one bucket between the binds of an account, and none with another account', () => {
    const clock = new ManualClock();
    const b = new Behaviour();
    b.set({ throttleRatePerAccount: 100, throttleAccountBurst: 4 });
    const account = new SubmitThrottle('account');
    const [first, second] = [new SubmitChecks(account), new SubmitChecks(account)];
    const other = new SubmitChecks(new SubmitThrottle('account'));
    expect(submit(first, b, 3, clock.now())).toEqual({ ok: 3, throttled: 0 });
    expect(submit(second, b, 3, clock.now())).toEqual({ ok: 1, throttled: 2 });
    expect(submit(other, b, 4, clock.now())).toEqual({ ok: 4, throttled: 0 });
    clock.advance(10); // one token at 100/s
    expect(submit(second, b, 2, clock.now())).toEqual({ ok: 1, throttled: 1 });
    expect(submit(first, b, 1, clock.now())).toEqual({ ok: 0, throttled: 1 });
  });

  it('holds the account to rate + burst over a simulated second, however many binds share it', () => {
    const clock = new ManualClock();
    const b = new Behaviour();
    b.set({ throttleRatePerAccount: 200 });
    const account = new SubmitThrottle('account');
    const binds = [1, 2, 3].map(() => new SubmitChecks(account));
    let ok = 0;
    for (let t = 0; t < 1000; t++) {
      for (const bind of binds) ok += submit(bind, b, 2, clock.now()).ok;
      clock.advance(1);
    }
    expect(ok).toBeGreaterThanOrEqual(200);
    expect(ok).toBeLessThanOrEqual(204); // rate + the default burst of 200 / 50
  });

  it('applies both limits, and a submit_sm refused by one costs the other nothing', () => {
    const clock = new ManualClock();
    const b = new Behaviour();
    b.set({ throttleRatePerBind: 1000, throttleBurst: 2, throttleRatePerAccount: 1000, throttleAccountBurst: 3 });
    const account = new SubmitThrottle('account');
    const [first, second] = [new SubmitChecks(account), new SubmitChecks(account)];
    // The bind's limit refuses the third: the account keeps that token for the other bind.
    expect(submit(first, b, 3, clock.now())).toEqual({ ok: 2, throttled: 1 });
    expect(submit(second, b, 2, clock.now())).toEqual({ ok: 1, throttled: 1 });
    // The account's limit refused the second bind's second: its bind kept that token.
    clock.advance(1); // one token more for each bucket
    expect(submit(second, b, 1, clock.now())).toEqual({ ok: 1, throttled: 0 });
    expect(submit(second, b, 1, clock.now())).toEqual({ ok: 0, throttled: 1 });
  });

  it('follows runtime changes, keeping the saved tokens capped at the new burst', () => {
    const clock = new ManualClock();
    const b = new Behaviour();
    b.set({ throttleRatePerAccount: 10, throttleAccountBurst: 5 });
    const checks = new SubmitChecks(new SubmitThrottle('account'));
    expect(submit(checks, b, 3, clock.now()).ok).toBe(3);
    b.set({ throttleAccountBurst: 1 });
    expect(submit(checks, b, 3, clock.now()).ok).toBe(1);
    b.set({ throttleRatePerAccount: 0 });
    expect(submit(checks, b, 50, clock.now()).ok).toBe(50);
    clock.advance(10_000);
    b.set({ throttleRatePerAccount: 10 });
    expect(submit(checks, b, 5, clock.now()).ok).toBe(1);
    b.set({ throttleAccountBurst: 4 }); // a bigger burst is earned, not handed out
    expect(submit(checks, b, 5, clock.now()).ok).toBe(0);
    clock.advance(1_000);
    expect(submit(checks, b, 5, clock.now()).ok).toBe(4);
  });

  it('gives a full burst again after a reset', () => {
    const clock = new ManualClock();
    const b = new Behaviour();
    b.set({ throttleRatePerAccount: 1, throttleAccountBurst: 3 });
    const account = new SubmitThrottle('account');
    const checks = new SubmitChecks(account);
    expect(submit(checks, b, 5, clock.now()).ok).toBe(3);
    account.reset();
    expect(submit(checks, b, 5, clock.now()).ok).toBe(3);
  });

  it('without an account throttle, checks only the bind', () => {
    const b = new Behaviour();
    b.set({ throttleRatePerAccount: 1, throttleAccountBurst: 1 });
    expect(submit(new SubmitChecks(), b, 5, 0)).toEqual({ ok: 5, throttled: 0 });
  });
});
