/**
 * A raw SMSC on node:net for tests that need to send what no real SMSC (nor the simulator) would:
 * it answers an ESME's bind, enquire_link, submit_sm and unbind by hand, records every PDU the
 * ESME writes, and lets the test write any bytes to a bound link.
 */
import net from 'node:net';
import { AnswerReader } from './smpp-fuzz.js';
import { PduBytes } from './pdu-bytes.js';

export interface SeenPdu {
  commandId: number;
  status: number;
  sequenceNumber: number;
  body: Buffer;
}

/** One ESME connection to the fake SMSC. */
export class FakeLink {
  /** Every PDU the ESME wrote, in order. */
  readonly seen: SeenPdu[] = [];
  bound = false;
  closed = false;
  /** We closed it (not the ESME). */
  closedByUs = false;
  submits = 0;
  readonly #reader = new AnswerReader();
  readonly #listeners = new Set<() => void>();

  /** `afterBind`: bytes written in the same write as the bind response (a close in the same read, say). */
  constructor(readonly socket: net.Socket, private readonly afterBind: Buffer = Buffer.alloc(0)) {
    socket.on('data', (chunk: Buffer) => {
      for (const pdu of this.#reader.push(chunk)) this.#onPdu(pdu);
      this.#changed();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.#changed();
    });
  }

  write(bytes: Buffer): void {
    if (!this.closed) this.socket.write(bytes);
  }

  /** Resets the link from the SMSC's side. */
  destroy(): void {
    this.closedByUs = true;
    this.closed = true;
    this.socket.destroy();
  }

  /** Resolves when `check` holds (checked after each PDU and at close), or false after `ms`. */
  waitFor(check: () => boolean, ms: number): Promise<boolean> {
    if (check()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const listener = (): void => {
        if (!check()) return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        resolve(check());
      }, ms);
      this.#listeners.add(listener);
    });
  }

  #changed(): void {
    for (const l of [...this.#listeners]) l();
  }

  #onPdu(pdu: SeenPdu): void {
    this.seen.push(pdu);
    const answer = (commandId: number, build: (b: PduBytes) => PduBytes = (b) => b): Buffer => build(new PduBytes(commandId, pdu.sequenceNumber)).build();
    switch (pdu.commandId) {
      case 0x00000009: // bind_transceiver (SMPP v3.4 §4.1.5)
      case 0x00000001:
      case 0x00000002:
        this.write(Buffer.concat([answer((pdu.commandId | 0x80000000) >>> 0, (b) => b.cstr('fake')), this.afterBind]));
        this.bound = true;
        return;
      case 0x00000015: // enquire_link
        this.write(answer(0x80000015));
        return;
      case 0x00000004: // submit_sm
        this.submits++;
        this.write(answer(0x80000004, (b) => b.cstr(`F${this.submits}`)));
        return;
      case 0x00000006: // unbind
        this.write(answer(0x80000006));
        this.socket.end();
        return;
      default:
        // Responses and generic_nack: recorded only.
    }
  }
}

export class FakeSmsc {
  readonly links: FakeLink[] = [];
  readonly #server: net.Server;

  private constructor(server: net.Server, afterBind: (link: number) => Buffer | undefined) {
    this.#server = server;
    server.on('connection', (socket) => this.links.push(new FakeLink(socket, afterBind(this.links.length))));
  }

  /** `afterBind(n)`: bytes the n-th link (from 0) gets in the same write as its bind response. */
  static async start(o: { afterBind?: (link: number) => Buffer | undefined } = {}): Promise<FakeSmsc> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new FakeSmsc(server, o.afterBind ?? (() => undefined));
  }

  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  /** The link that is bound and open now, waiting up to `ms` for the ESME to (re)connect and bind. */
  async boundLink(ms = 10_000): Promise<FakeLink> {
    const current = (): FakeLink | undefined => this.links.find((l) => l.bound && !l.closed);
    const deadline = Date.now() + ms;
    for (;;) {
      const link = current();
      if (link) return link;
      if (Date.now() > deadline) throw new Error('the ESME did not bind again');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  async stop(): Promise<void> {
    for (const l of this.links) l.socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
