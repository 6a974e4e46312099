import { readFileSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { FrameReader } from '../../src/smpp/frame.js';
import { submitSmDefaults, type BindCommand, type DeliverSmPdu, type Pdu, type SubmitSmPdu } from '../../src/smpp/pdu.js';
import { decodePdu, encodePdu } from '../../src/smpp/wire.js';

/** A file of test/fixtures/tls. */
export const tlsFile = (name: string): Buffer => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

/** A minimal ESME: frames and decodes what arrives, lets the test wait for a PDU by predicate. */
export class RawClient {
  readonly #reader = new FrameReader();
  readonly #inbox: Pdu[] = [];
  #waiters: Array<() => void> = [];
  #seq = 0;
  closed = false;
  readonly whenClosed: Promise<void>;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const frame of this.#reader.push(chunk)) {
        const d = decodePdu(frame);
        if (d.ok) this.#inbox.push(d.pdu);
        else throw new Error(`client could not decode: ${d.reason}`);
      }
      this.#wake();
    });
    socket.on('error', () => {});
    this.whenClosed = new Promise((resolve) => socket.on('close', () => {
      this.closed = true;
      this.#wake();
      resolve();
    }));
  }

  static async open(port: number, tls = false): Promise<RawClient> {
    const socket = tls
      ? connectTls({ host: '127.0.0.1', port, ca: tlsFile('ca.crt'), servername: 'localhost', rejectUnauthorized: true })
      : connectTcp({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once(tls ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawClient(socket);
  }

  nextSeq(): number {
    return ++this.#seq;
  }

  send(...pdus: Pdu[]): void {
    this.socket.write(Buffer.concat(pdus.map(encodePdu)));
  }

  /** Removes and returns the first PDU that matches, waiting for it if need be. */
  async take(match: (p: Pdu) => boolean, what = 'a PDU', timeoutMs = 5_000): Promise<Pdu> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.#inbox.findIndex(match);
      if (i >= 0) return this.#inbox.splice(i, 1)[0]!;
      if (this.closed) throw new Error(`connection closed while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.#waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
  }

  async takeMany(n: number, match: (p: Pdu) => boolean, what: string): Promise<Pdu[]> {
    const out: Pdu[] = [];
    for (let i = 0; i < n; i++) out.push(await this.take(match, `${what} #${i + 1}`));
    return out;
  }

  pending(): Pdu[] {
    return [...this.#inbox];
  }

  async bind(mode: BindCommand = 'bind_transceiver', systemId = 'smppclient1', password = 'password'): Promise<number> {
    const seq = this.nextSeq();
    this.send({ command: mode, sequenceNumber: seq, commandStatus: 0, systemId, password, systemType: '', interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '' });
    const resp = await this.take((p) => p.command === `${mode}_resp` && p.sequenceNumber === seq, `${mode}_resp`);
    return resp.commandStatus;
  }

  submit(dest: string, text: string, extra: Partial<SubmitSmPdu> = {}): SubmitSmPdu {
    return { ...submitSmDefaults(), sequenceNumber: this.nextSeq(), sourceAddr: 'Acme', destinationAddr: dest, dataCoding: 0, shortMessage: Buffer.from(text, 'latin1'), ...extra };
  }

  close(): void {
    this.socket.destroy();
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** The answer to the submit_sm with sequence number `seq`: a submit_sm_resp or a generic_nack. */
export const isResp = (seq: number) => (p: Pdu): boolean => (p.command === 'submit_sm_resp' || p.command === 'generic_nack') && p.sequenceNumber === seq;
export const isDeliver = (p: Pdu): p is DeliverSmPdu => p.command === 'deliver_sm';
