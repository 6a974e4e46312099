/**
 * The acks of one consumer channel, sent together. A group commit of the store settles a whole
 * prefetch of messages in one turn of the event loop; acked one by one, each costs the broker a
 * basic.ack of its own, and RabbitMQ spends markedly less CPU per message on one ack for many
 * than on one each. So acks wait for the end of the turn: those that follow each
 * other from the oldest message still outstanding on the channel go as one basic.ack with
 * `multiple` set; any other goes alone at the same time, so that a message held back (a slow
 * commit, a requeue's delay) never holds up the acks of the messages after it.
 *
 * `multiple` acks every delivery up to its tag that the channel has not settled, so it is sent
 * only when each of them is settled here: acked now, or nacked before (a nacked delivery is no
 * longer the channel's, and a later `multiple` passes over it).
 */

/** What it sends: `multiple` acks every outstanding delivery up to and including `tag`. */
export type SendAck<M> = (message: M, multiple: boolean) => void;

interface Outstanding<M> {
  message: M;
  /** pending: delivered, not settled; ack: to be acked at the flush; settled: acked or nacked already. */
  state: 'pending' | 'ack' | 'settled';
}

export class ChannelAcks<M> {
  readonly #send: SendAck<M>;
  readonly #defer: (flush: () => void) => void;
  readonly #tagOf: (message: M) => number;
  /** Deliveries in the order of their tags, from `#head` on; settled ones leave from the front. */
  #queue: Array<Outstanding<M>> = [];
  #head = 0;
  readonly #byTag = new Map<number, Outstanding<M>>();
  #flushDue = false;
  #frames = 0;

  /**
   * `defer` runs the flush once the current turn is done (default `setImmediate`); `tagOf` reads a
   * delivery's tag (it grows with each delivery on a channel).
   */
  constructor(send: SendAck<M>, tagOf: (message: M) => number, defer: (flush: () => void) => void = (f) => { setImmediate(f); }) {
    this.#send = send;
    this.#tagOf = tagOf;
    this.#defer = defer;
  }

  /** basic.ack frames sent so far. */
  get frames(): number {
    return this.#frames;
  }

  /** Deliveries it keeps: not settled, waiting for the flush, or settled behind one that is not. */
  get outstanding(): number {
    return this.#byTag.size;
  }

  /** A delivery arrived: it is outstanding until `ack` or `settled`. */
  delivered(message: M): void {
    const entry: Outstanding<M> = { message, state: 'pending' };
    this.#queue.push(entry);
    this.#byTag.set(this.#tagOf(message), entry);
  }

  /** To be acked at the end of this turn (or at `flush`). */
  ack(message: M): void {
    const entry = this.#byTag.get(this.#tagOf(message));
    if (entry?.state !== 'pending') return;
    entry.state = 'ack';
    this.#flushLater();
  }

  /** Settled by other means (nacked): no ack for it; a `multiple` may pass over it. */
  settled(message: M): void {
    const entry = this.#byTag.get(this.#tagOf(message));
    if (entry?.state !== 'pending') return;
    entry.state = 'settled';
    // Also when nothing is acked (a store that fails: every message goes back): the flush forgets it.
    this.#flushLater();
  }

  /** Sends the acks due now: before the channel closes, or at the end of the turn. */
  flush(): void {
    this.#flushDue = false;
    // The run of settled deliveries at the front: one ack with `multiple` for its last acked one.
    let last: M | undefined;
    while (this.#head < this.#queue.length && this.#queue[this.#head]!.state !== 'pending') {
      const entry = this.#queue[this.#head++]!;
      if (entry.state === 'ack') last = entry.message;
      this.#byTag.delete(this.#tagOf(entry.message));
    }
    if (last !== undefined) this.#emit(last, true);
    // Behind a delivery still pending: each alone, and kept in the queue (settled) until the front reaches it.
    for (let i = this.#head; i < this.#queue.length; i++) {
      const entry = this.#queue[i]!;
      if (entry.state !== 'ack') continue;
      this.#emit(entry.message, false);
      entry.state = 'settled';
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  #flushLater(): void {
    if (this.#flushDue) return;
    this.#flushDue = true;
    this.#defer(() => this.flush());
  }

  #emit(message: M, multiple: boolean): void {
    this.#frames++;
    this.#send(message, multiple);
  }
}
