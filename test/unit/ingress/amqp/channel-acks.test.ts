/**
 * ChannelAcks against a model of a channel's broker side: `multiple` acks every delivery up to
 * its tag that is still outstanding, a single ack of a tag that is not outstanding is a channel
 * error (RabbitMQ: PRECONDITION_FAILED, unknown delivery tag). No delivery may be acked before the
 * ingress acks it, each one it acks is acked on the broker by the flush, and a run of acks from the
 * front goes as one frame.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChannelAcks } from '../../../../src/ingress/amqp/channel-acks.js';

interface Delivery {
  tag: number;
}

/** The broker's side of one channel: which deliveries are outstanding, and what it was told. */
class BrokerChannel {
  readonly outstanding = new Set<number>();
  readonly acked: number[] = [];
  readonly nacked: number[] = [];
  frames = 0;
  #next = 1;

  deliver(): Delivery {
    const tag = this.#next++;
    this.outstanding.add(tag);
    return { tag };
  }

  ack(d: Delivery, multiple: boolean): void {
    this.frames++;
    if (multiple) {
      const covered = [...this.outstanding].filter((t) => t <= d.tag);
      if (!covered.includes(d.tag)) throw new Error(`multiple ack of ${d.tag}, which is not outstanding`);
      for (const t of covered) this.#settle(t, this.acked);
    } else {
      if (!this.outstanding.has(d.tag)) throw new Error(`unknown delivery tag ${d.tag}`);
      this.#settle(d.tag, this.acked);
    }
  }

  nack(d: Delivery): void {
    if (!this.outstanding.has(d.tag)) throw new Error(`unknown delivery tag ${d.tag}`);
    this.#settle(d.tag, this.nacked);
  }

  #settle(tag: number, into: number[]): void {
    this.outstanding.delete(tag);
    into.push(tag);
  }
}

function rig() {
  const broker = new BrokerChannel();
  const due: Array<() => void> = [];
  const acks = new ChannelAcks<Delivery>((d, multiple) => broker.ack(d, multiple), (d) => d.tag, (flush) => due.push(flush));
  const endOfTurn = (): void => { for (const f of due.splice(0)) f(); };
  return { broker, acks, endOfTurn };
}

describe('ChannelAcks', () => {
  it('a run of acks from the oldest delivery goes as one frame, at the end of the turn', () => {
    const { broker, acks, endOfTurn } = rig();
    const ds = Array.from({ length: 500 }, () => broker.deliver());
    ds.forEach((d) => acks.delivered(d));
    ds.forEach((d) => acks.ack(d));
    expect(broker.frames).toBe(0);
    endOfTurn();
    expect(broker.frames).toBe(1);
    expect(broker.acked).toHaveLength(500);
    expect(broker.outstanding.size).toBe(0);
    expect(acks.outstanding).toBe(0);
  });

  it('acks behind a delivery still pending go alone at once, and the pending one is never acked with them', () => {
    const { broker, acks, endOfTurn } = rig();
    const [slow, ...rest] = Array.from({ length: 4 }, () => broker.deliver());
    for (const d of [slow!, ...rest]) acks.delivered(d);
    rest.forEach((d) => acks.ack(d));
    endOfTurn();
    expect(broker.acked).toEqual([2, 3, 4]);
    expect(broker.outstanding).toEqual(new Set([1]));
    expect(broker.frames).toBe(3);
    acks.ack(slow!);
    endOfTurn();
    expect(broker.acked).toEqual([2, 3, 4, 1]);
    expect(broker.frames).toBe(4);
    expect(acks.outstanding).toBe(0);
  });

  it('passes over a nacked delivery in a run, and never names it', () => {
    const { broker, acks, endOfTurn } = rig();
    const ds = Array.from({ length: 3 }, () => broker.deliver());
    ds.forEach((d) => acks.delivered(d));
    broker.nack(ds[1]!);
    acks.settled(ds[1]!);
    acks.ack(ds[0]!);
    acks.ack(ds[2]!);
    endOfTurn();
    expect(broker.frames).toBe(1);
    expect(broker.acked).toEqual([1, 3]);
    expect(broker.nacked).toEqual([2]);
  });

  it('forgets nacked deliveries when nothing is acked (a failing store sends every message back)', () => {
    const { broker, acks, endOfTurn } = rig();
    for (let i = 0; i < 100; i++) {
      const d = broker.deliver();
      acks.delivered(d);
      broker.nack(d);
      acks.settled(d);
      endOfTurn();
    }
    expect(acks.outstanding).toBe(0);
    expect(broker.frames).toBe(0);
  });

  it('flush sends what is due at once (before a close)', () => {
    const { broker, acks } = rig();
    const d = broker.deliver();
    acks.delivered(d);
    acks.ack(d);
    acks.flush();
    expect(broker.acked).toEqual([1]);
  });

  it('any order of deliveries, acks, nacks and turns: nothing acked early, nothing acked twice, every ack sent', () => {
    type Step = { kind: 'deliver' } | { kind: 'ack' | 'nack'; pick: number } | { kind: 'turn' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constant({ kind: 'deliver' as const }),
      fc.record({ kind: fc.constantFrom('ack' as const, 'nack' as const), pick: fc.nat() }),
      fc.constant({ kind: 'turn' as const }),
    );
    fc.assert(fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
      const { broker, acks, endOfTurn } = rig();
      const unsettled: Delivery[] = [];
      const ackedByIngress = new Set<number>();
      for (const s of steps) {
        if (s.kind === 'deliver') {
          const d = broker.deliver();
          acks.delivered(d);
          unsettled.push(d);
        } else if (s.kind === 'turn') {
          endOfTurn();
        } else if (unsettled.length > 0) {
          const [d] = unsettled.splice(s.pick % unsettled.length, 1);
          if (s.kind === 'ack') {
            acks.ack(d!);
            ackedByIngress.add(d!.tag);
          } else {
            broker.nack(d!);
            acks.settled(d!);
          }
        }
        for (const tag of broker.acked) expect(ackedByIngress.has(tag)).toBe(true);
      }
      endOfTurn();
      expect(new Set(broker.acked)).toEqual(ackedByIngress);
      expect(broker.acked).toHaveLength(ackedByIngress.size);
      if (unsettled.length === 0) expect(acks.outstanding).toBe(0);
      expect(broker.outstanding).toEqual(new Set(unsettled.map((d) => d.tag)));
    }));
  });
});
