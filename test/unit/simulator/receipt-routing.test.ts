import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { ReceiptRouter, type RoutableBind } from '../../../src/simulator/receipt-routing.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { FrameReader } from '../../../src/smpp/frame.js';
import { submitSmDefaults, type Pdu } from '../../../src/smpp/pdu.js';
import { decodePdu, encodePdu } from '../../../src/smpp/wire.js';

const bind = (bindId: number, systemType: string, canReceive = true): RoutableBind => ({ bindId, systemType, canReceive });

describe('receipt routing', () => {
  it("'other-system-type' round-robins over the receiving binds with another system_type", () => {
    const router = new ReceiptRouter();
    const binds = [bind(1, 'a'), bind(2, 'a'), bind(3, 'b'), bind(4, 'b'), bind(5, 'b', false)];
    const from = (bindId: number, systemType: string) => router.pick('acct', binds, { bindId, systemType }, 'other-system-type');
    expect([1, 2, 1, 2].map((id) => from(id, 'a'))).toEqual([
      { target: binds[2], fellBack: false }, { target: binds[3], fellBack: false },
      { target: binds[2], fellBack: false }, { target: binds[3], fellBack: false },
    ]);
    expect([3, 4].map((id) => from(id, 'b')?.target.bindId)).toEqual([1, 2]);
  });

  it("'other-system-type' keeps a turn per submitting system_type, so alternating instances each reach every bind of the other", () => {
    const router = new ReceiptRouter();
    const binds = [bind(1, 'a'), bind(2, 'a'), bind(3, 'b'), bind(4, 'b')];
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      for (const origin of [{ bindId: 1, systemType: 'a' }, { bindId: 3, systemType: 'b' }]) {
        seen.push(router.pick('acct', binds, origin, 'other-system-type')!.target.bindId);
      }
    }
    expect(seen).toEqual([3, 1, 4, 2, 3, 1, 4, 2]);
  });

  it("'other-system-type' falls back as 'same' when every receiving bind has the submitter's system_type, and says so", () => {
    const router = new ReceiptRouter();
    const binds = [bind(1, 'a'), bind(2, 'a'), bind(3, 'b', false)];
    expect(router.pick('acct', binds, { bindId: 2, systemType: 'a' }, 'other-system-type')).toEqual({ target: binds[1], fellBack: true });
    // The submitting bind cannot receive (or is gone): any receiving bind of the account, round-robin.
    const gone = { bindId: 9, systemType: 'a' };
    expect([1, 2, 3].map(() => router.pick('acct', binds, gone, 'other-system-type'))).toEqual([
      { target: binds[0], fellBack: true }, { target: binds[1], fellBack: true }, { target: binds[0], fellBack: true },
    ]);
  });

  it("'same' and 'any' route as before: the submitting bind or round-robin; no receiver is undefined", () => {
    const router = new ReceiptRouter();
    const binds = [bind(1, 'a', false), bind(2, 'a'), bind(3, 'b')];
    expect(router.pick('acct', binds, { bindId: 3, systemType: 'b' }, 'same')).toEqual({ target: binds[2], fellBack: false });
    expect([0, 1, 2].map(() => router.pick('acct', binds, { bindId: 1, systemType: 'a' }, 'same')?.target.bindId)).toEqual([2, 3, 2]);
    expect([0, 1, 2].map(() => router.pick('acct', binds, { bindId: 3, systemType: 'b' }, 'any')?.target.bindId)).toEqual([3, 2, 3]);
    expect(router.pick('acct', [bind(1, 'a', false)], { bindId: 1, systemType: 'a' }, 'other-system-type')).toBeUndefined();
    expect(router.pick('acct', [], { bindId: 1, systemType: 'a' }, 'any')).toBeUndefined();
  });
});

/** A bare ESME over TCP: binds with a system_type, submits, and keeps the deliver_sm it is sent. */
class Esme {
  readonly delivered: Pdu[] = [];
  readonly #reader = new FrameReader();
  readonly #inbox: Pdu[] = [];
  #seq = 0;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const frame of this.#reader.push(chunk)) {
        const d = decodePdu(frame);
        if (!d.ok) throw new Error(`could not decode: ${d.reason}`);
        if (d.pdu.command === 'deliver_sm') {
          this.delivered.push(d.pdu);
          socket.write(encodePdu({ command: 'deliver_sm_resp', sequenceNumber: d.pdu.sequenceNumber, commandStatus: 0, messageId: '' }));
        } else {
          this.#inbox.push(d.pdu);
        }
      }
    });
    socket.on('error', () => {});
  }

  static async bind(port: number, systemType: string): Promise<Esme> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const esme = new Esme(socket);
    socket.write(encodePdu({
      command: 'bind_transceiver', sequenceNumber: ++esme.#seq, commandStatus: 0, systemId: 'acct', password: 'pw',
      systemType, interfaceVersion: 0x34, addrTon: 0, addrNpi: 0, addressRange: '',
    }));
    await until(() => esme.#inbox.some((p) => p.command === 'bind_transceiver_resp' && p.commandStatus === 0), 'bind_transceiver_resp');
    return esme;
  }

  submit(destination: string): void {
    this.socket.write(encodePdu({
      ...submitSmDefaults(), sequenceNumber: ++this.#seq, sourceAddr: 'Acme', destinationAddr: destination,
      dataCoding: 0, shortMessage: Buffer.from('hi'), registeredDelivery: 1,
    }));
  }
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("simulator with receiptRouting 'other-system-type'", () => {
  it('sends each receipt on a bind of the account that bound with another system_type, and counts each fallback', async () => {
    const sim = new SmscSimulator({
      port: 0, accounts: [{ systemId: 'acct', password: 'pw' }],
      behaviour: { receiptRouting: 'other-system-type', receipts: { delayMs: 0 } },
    }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const a = await Esme.bind(port, 'instance-a');
    const b1 = await Esme.bind(port, 'instance-b');
    const b2 = await Esme.bind(port, 'instance-b');
    for (const e of [a, b1, b2]) cleanups.push(() => { e.socket.destroy(); });
    expect(sim.counters().binds.map((x) => x.systemType)).toEqual(['instance-a', 'instance-b', 'instance-b']);

    for (let i = 0; i < 4; i++) a.submit(`4477009000${i}`);
    b1.submit('447700900100');
    b2.submit('447700900101');
    await until(() => sim.counters().totals.deliverSmRespReceived === 6, 'six receipts answered');
    expect([a.delivered.length, b1.delivered.length, b2.delivered.length]).toEqual([2, 2, 2]);
    expect(sim.counters().totals.receiptsRoutingFallback).toBe(0);

    // Instance A is gone: B's receipts have no bind of another system_type and go back where they came from.
    a.socket.destroy();
    await until(() => sim.counters().bindsActive === 2, 'the first bind gone at the SMSC');
    b2.submit('447700900102');
    await until(() => sim.counters().totals.deliverSmRespReceived === 7, 'the seventh receipt answered');
    expect([b1.delivered.length, b2.delivered.length]).toEqual([2, 3]);
    const counters = sim.counters();
    expect(counters.totals.receiptsRoutingFallback).toBe(1);
    expect(counters.binds.map((x) => x.receiptsRoutingFallback)).toEqual([0, 0, 1]);
  });
});
