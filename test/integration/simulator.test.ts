import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, SystemClock, type Clock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorCounters } from '../../src/simulator/counters.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { encodePdu } from '../../src/smpp/wire.js';
import { PduBytes, submitSmBytes } from '../support/pdu-bytes.js';
import { isDeliver, isResp, RawClient, tlsFile } from '../support/raw-esme.js';

const sims: SmscSimulator[] = [];
const clients: RawClient[] = [];

async function simulator(opts: Partial<SimulatorOptions> = {}, clock: Clock = new SystemClock()): Promise<{ sim: SmscSimulator; port: number }> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true, ...opts,
  }, clock, silentLog);
  sims.push(sim);
  const { port } = await sim.start();
  return { sim, port };
}

async function client(port: number, tls = false): Promise<RawClient> {
  const c = await RawClient.open(port, tls);
  clients.push(c);
  return c;
}

async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of sims.splice(0)) await s.stop();
});

describe('SMSC simulator over real sockets', () => {
  it('binds with good credentials; refuses a bad password and an unknown system_id but keeps the link open', async () => {
    const { sim, port } = await simulator();
    const c = await client(port);
    expect(await c.bind('bind_transceiver', 'smppclient1', 'wrong')).toBe(0x0e);
    expect(await c.bind('bind_transceiver', 'nobody', 'password')).toBe(0x0f);
    expect(c.closed).toBe(false);
    expect(await c.bind('bind_transceiver')).toBe(0);
    expect(await c.bind('bind_transceiver')).toBe(0x05); // a second bind on a bound link
    const counters = sim.counters();
    expect(counters.bindsRejected).toBe(3);
    expect(counters.totals.bindsRejected).toBe(3);
    expect(counters.bindsRejectedByStatus).toEqual({ ESME_RINVPASWD: 1, ESME_RINVSYSID: 1, ESME_RALYBND: 1 });
    expect(counters.binds).toHaveLength(1);
    expect(counters.binds[0]).toMatchObject({ bindId: 1, systemId: 'smppclient1', bindMode: 'transceiver', closed: false });
  });

  it('refuses binds past an account\'s maxBinds with ESME_RALYBND', async () => {
    const { sim, port } = await simulator({ accounts: [{ systemId: 'smppclient1', password: 'password', maxBinds: 1 }] });
    const a = await client(port);
    const b = await client(port);
    expect(await a.bind()).toBe(0);
    expect(await b.bind('bind_transmitter')).toBe(0x05);
    a.close();
    await until(() => sim.counters().bindsActive === 0, 'the first bind gone at the SMSC');
    expect(await b.bind('bind_transmitter')).toBe(0);
  });

  it('answers every submit_sm with a unique message id and counts what it saw', async () => {
    const { sim, port } = await simulator();
    const c = await client(port);
    await c.bind();
    const pdus = Array.from({ length: 50 }, (_, i) => c.submit(`49151${i}`, `m${i}`));
    c.send(...pdus);
    const resps = await c.takeMany(50, (p) => p.command === 'submit_sm_resp', 'submit_sm_resp');
    const ids = resps.map((r) => (r.command === 'submit_sm_resp' ? r.messageId : ''));
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(resps.map((r) => r.sequenceNumber).sort((a, b) => a - b)).toEqual(pdus.map((p) => p.sequenceNumber));
    const { totals, binds } = sim.counters();
    expect(totals.submitsReceived).toBe(50);
    expect(totals.submitResponses).toEqual({ ESME_ROK: 50 });
    expect(binds[0]!.outstanding).toBe(0);
    expect(binds[0]!.maxSubmitsPerSecond).toBe(50);
    const rec = sim.recordedSubmits();
    expect(rec).toHaveLength(50);
    expect(rec[3]).toMatchObject({ bindId: 1, destinationAddr: '491513', sourceAddr: 'Acme', dataCoding: 0, messageId: ids[3] });
    expect(rec[3]!.shortMessage.toString()).toBe('m3');
  });

  it('sends a receipt with the right text and TLVs, and counts the deliver_sm_resp', async () => {
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 10 }, messageIdFormat: 'decimal' } });
    const c = await client(port);
    await c.bind();
    const pdu = c.submit('4915112345678', 'Hello receipt text that is long', { registeredDelivery: 1 });
    c.send(pdu);
    const resp = await c.take(isResp(pdu.sequenceNumber), 'submit_sm_resp');
    const id = resp.command === 'submit_sm_resp' ? resp.messageId : '';
    expect(id).toMatch(/^\d{15}$/);
    const receipt = await c.take(isDeliver, 'receipt');
    if (!isDeliver(receipt)) throw new Error('not a deliver_sm');
    expect(receipt.esmClass).toBe(0x04);
    expect(receipt.dataCoding).toBe(0);
    expect(receipt.sourceAddr).toBe('4915112345678');
    expect(receipt.destinationAddr).toBe('Acme');
    expect(receipt.tlvs?.receiptedMessageId).toBe(id);
    expect(receipt.tlvs?.messageState).toBe(2);
    expect(receipt.shortMessage.toString('latin1')).toMatch(new RegExp(`^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:Hello receipt text t$`));
    c.send({ command: 'deliver_sm_resp', sequenceNumber: receipt.sequenceNumber, commandStatus: 0, messageId: '' });
    await until(() => sim.counters().totals.deliverSmRespReceived === 1, 'deliver_sm_resp at SMSC');
    const b = sim.counters().binds[0]!;
    expect(b).toMatchObject({ receiptsSent: 1, receiptsPending: 0, deliverSmResponses: { ESME_ROK: 1 } });
  });

  it('refuses a submit_sm whose address is longer than SMPP v3.4 allows, as an SMSC would, and sends it no receipt', async () => {
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 0 } } });
    const c = await client(port);
    await c.bind();
    // Our encoder refuses these: the bytes are written by hand.
    c.socket.write(submitSmBytes(101, '4'.repeat(21), Buffer.from('x'), { source: 'Acme', registeredDelivery: 1 }).build());
    c.socket.write(submitSmBytes(102, '447700900123', Buffer.from('x'), { source: 'S'.repeat(21), registeredDelivery: 1 }).build());
    c.socket.write(submitSmBytes(103, '4'.repeat(20), Buffer.from('x'), { source: 'S'.repeat(20), registeredDelivery: 1 }).build());
    expect((await c.take(isResp(101), 'resp 101')).commandStatus).toBe(0x0b);
    expect((await c.take(isResp(102), 'resp 102')).commandStatus).toBe(0x0a);
    expect((await c.take(isResp(103), 'resp 103')).commandStatus).toBe(0);
    const receipt = await c.take(isDeliver, 'the one receipt');
    expect(receipt).toMatchObject({ sourceAddr: '4'.repeat(20), destinationAddr: 'S'.repeat(20) });
    expect(sim.counters().totals.submitResponses).toEqual({ ESME_RINVDSTADR: 1, ESME_RINVSRCADR: 1, ESME_ROK: 1 });
  });

  it('sends no receipt when none is asked for, and redelivers a refused one once', async () => {
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 0, outcomes: { UNDELIV: 1 }, messageIdInReceipt: 'decimal' } } });
    const c = await client(port);
    await c.bind();
    const quiet = c.submit('1', 'no receipt');
    const loud = c.submit('2', 'receipt', { registeredDelivery: 1 });
    c.send(quiet, loud);
    const resp = await c.take(isResp(loud.sequenceNumber), 'resp');
    const hexId = resp.command === 'submit_sm_resp' ? resp.messageId : '';
    const first = await c.take(isDeliver, 'receipt');
    if (!isDeliver(first)) throw new Error('not a deliver_sm');
    expect(first.tlvs?.receiptedMessageId).toBe(BigInt(`0x${hexId}`).toString(10));
    expect(first.tlvs?.messageState).toBe(5);
    expect(first.shortMessage.toString('latin1')).toMatch(/dlvrd:000 .* stat:UNDELIV err:(?!000)\d{3} text:receipt$/);
    c.send({ command: 'deliver_sm_resp', sequenceNumber: first.sequenceNumber, commandStatus: 0x08, messageId: '' });
    const again = await c.take(isDeliver, 'redelivered receipt');
    if (!isDeliver(again)) throw new Error('not a deliver_sm');
    expect(again.tlvs?.receiptedMessageId).toBe(first.tlvs?.receiptedMessageId);
    c.send({ command: 'deliver_sm_resp', sequenceNumber: again.sequenceNumber, commandStatus: 0x08, messageId: '' });
    await until(() => sim.counters().totals.deliverSmRespReceived === 2, 'two deliver_sm_resp');
    expect(sim.counters().totals).toMatchObject({ receiptsSent: 2, receiptsRedelivered: 1, receiptsPending: 0, deliverSmResponses: { ESME_RSYSERR: 2 } });
    expect(c.pending().filter(isDeliver)).toHaveLength(0);
  });

  it('holds receipts for a transmitter\'s submits until a receiver of the account binds', async () => {
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 0 } } });
    const tx = await client(port);
    await tx.bind('bind_transmitter');
    const pdu = tx.submit('3', 'via rx', { registeredDelivery: 1 });
    tx.send(pdu);
    await tx.take(isResp(pdu.sequenceNumber), 'resp');
    await until(() => sim.counters().receiptsWaitingForReceiver === 1, 'receipt waiting');
    const rx = await client(port);
    await rx.bind('bind_receiver');
    const receipt = await rx.take(isDeliver, 'receipt on the receiver');
    expect(receipt.command).toBe('deliver_sm');
    expect(sim.counters().receiptsWaitingForReceiver).toBe(0);
    expect(sim.counters().binds.map((b) => [b.bindMode, b.receiptsSent, b.receiptsPending])).toEqual([['transmitter', 0, 0], ['receiver', 1, 0]]);
  });

  it('routes receipts to the submitting bind, falls back to another of the account, and round-robins with any', async () => {
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 30 } } });
    const a = await client(port);
    const b = await client(port);
    await a.bind();
    await b.bind();
    const own = a.submit('1', 'own', { registeredDelivery: 1 });
    a.send(own);
    await a.take(isDeliver, 'receipt on the submitting bind');
    sim.setBehaviour({ receipts: { delayMs: 200 } });
    const orphan = a.submit('2', 'orphan', { registeredDelivery: 1 });
    a.send(orphan);
    await a.take(isResp(orphan.sequenceNumber), 'resp');
    a.close();
    await b.take(isDeliver, 'receipt on the other bind after the first closed');

    sim.setBehaviour({ receiptRouting: 'any', receipts: { delayMs: 0, duplicateProbability: 1 } });
    const c = await client(port);
    await c.bind();
    b.send(...[3, 4, 5, 6].map((i) => b.submit(String(i), 'rr', { registeredDelivery: 1 })));
    await until(() => sim.counters().totals.receiptsSent === 2 + 8, 'four receipts sent twice');
    const perBind = sim.counters().binds.map((x) => x.receiptsSent);
    // a: its own receipt (and the orphan too, if the SMSC sent it before noticing the close).
    expect(perBind[0]).toBeGreaterThanOrEqual(1);
    expect(perBind.slice(1)).toEqual([5, 4]);
  });

  it('can send the receipt before the submit_sm_resp', async () => {
    const { port } = await simulator({ behaviour: { responseDelayMs: 50, receipts: { beforeResponseProbability: 1 } } });
    const c = await client(port);
    await c.bind();
    const pdu = c.submit('4', 'early', { registeredDelivery: 1 });
    c.send(pdu);
    await c.take(isResp(pdu.sequenceNumber), 'resp');
    expect(c.pending().filter(isDeliver)).toHaveLength(1);
  });

  it('takes every delay from the injected clock: responses and receipts wait for it to move', async () => {
    const clock = new ManualClock();
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: 1_000, receipts: { delayMs: 5_000 } } }, clock);
    const c = await client(port);
    await c.bind();
    const pdu = c.submit('1', 'x', { registeredDelivery: 1 });
    c.send(pdu);
    await until(() => sim.counters().totals.outstanding === 1, 'submit at the SMSC');
    clock.advance(999);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.pending()).toHaveLength(0);
    clock.advance(1);
    await c.take(isResp(pdu.sequenceNumber), 'resp after one simulated second');
    expect(sim.counters().totals.receiptsPending).toBe(1);
    clock.advance(5_000);
    await c.take(isDeliver, 'receipt after five more');
  });

  it('sends a receipt with no delay along with its response, and under load sends receipts at most every batchMs', async () => {
    const clock = new ManualClock();
    const { sim, port } = await simulator({ behaviour: { receipts: { delayMs: 0, batchMs: 10 } } }, clock);
    const c = await client(port);
    await c.bind();
    const now = c.submit('1', 'now', { registeredDelivery: 1 });
    c.send(now);
    await c.take(isResp(now.sequenceNumber), 'resp');
    await c.take(isDeliver, 'receipt without the clock moving');

    const submitAndTakeResp = async (text: string): Promise<void> => {
      const pdu = c.submit('1', text, { registeredDelivery: 1 });
      c.send(pdu);
      await c.take(isResp(pdu.sequenceNumber), `resp to ${text}`);
    };
    // Receipts 10 ms after their responses at t = 0 and t = 2: the first goes at t = 10, and the
    // second, due at t = 12, waits for t = 20.
    sim.setBehaviour({ receipts: { delayMs: 10 } });
    await submitAndTakeResp('first');
    clock.advance(2);
    await submitAndTakeResp('second');
    clock.advance(8);
    const first = await c.take(isDeliver, 'first receipt, on time after a quiet spell');
    expect(isDeliver(first) && first.shortMessage.toString('latin1')).toMatch(/text:first$/);
    clock.advance(2);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.pending().filter(isDeliver)).toHaveLength(0);
    clock.advance(8);
    const second = await c.take(isDeliver, 'second receipt, batchMs after the first');
    expect(isDeliver(second) && second.shortMessage.toString('latin1')).toMatch(/text:second$/);
  });

  it('answers ESME_RTHROTTLED above the per-bind rate', async () => {
    const { sim, port } = await simulator({ behaviour: { throttleRatePerBind: 5, throttleBurst: 2 } });
    const c = await client(port);
    await c.bind();
    c.send(...Array.from({ length: 20 }, (_, i) => c.submit(`5${i}`, 'x')));
    const resps = await c.takeMany(20, (p) => p.command === 'submit_sm_resp', 'resp');
    const ok = resps.filter((r) => r.commandStatus === 0).length;
    expect(ok).toBeGreaterThanOrEqual(2);
    expect(ok).toBeLessThan(20);
    expect(resps.filter((r) => r.commandStatus === 0x58)).toHaveLength(20 - ok);
    expect(sim.counters().totals).toMatchObject({ throttled: 20 - ok, submitResponses: { ESME_ROK: ok, ESME_RTHROTTLED: 20 - ok } });
    expect(sim.recordedSubmits().filter((r) => r.messageId)).toHaveLength(ok);
  });

  it('records the most submit_sm outstanding at once when responses are delayed', async () => {
    const { sim, port } = await simulator({ behaviour: { responseDelayMs: { min: 20, max: 60 } } });
    const c = await client(port);
    await c.bind();
    c.send(...Array.from({ length: 30 }, (_, i) => c.submit(`6${i}`, 'x')));
    await until(() => sim.counters().totals.submitsReceived === 30, '30 at the SMSC');
    expect(sim.counters().binds[0]!.outstanding).toBe(30);
    await c.takeMany(30, (p) => p.command === 'submit_sm_resp', 'resp');
    c.send(c.submit('7', 'after'));
    await c.take((p) => p.command === 'submit_sm_resp', 'resp');
    const b = sim.counters().binds[0]!;
    expect(b.maxOutstanding).toBe(30);
    expect(b.outstanding).toBe(0);
  });

  it('answers generic_nack for a bad body and an unknown command, and the link keeps working', async () => {
    const { sim, port } = await simulator();
    const c = await client(port);
    // Before binding: a submit_sm is refused in its own response.
    const early = c.submit('8', 'too early');
    c.send(early);
    expect((await c.take(isResp(early.sequenceNumber), 'resp')).commandStatus).toBe(0x04);
    await c.bind();
    // submit_sm whose sm_length (0xff) runs past the end of the PDU.
    const bad = new PduBytes(0x00000004, 0x77).cstr('').u8(0).u8(0).cstr('a').u8(1).u8(1).cstr('b')
      .u8(0).u8(0).u8(0).cstr('').cstr('').u8(0).u8(0).u8(0).u8(0).u8(0xff).raw(Buffer.from('A')).build();
    const unknown = new PduBytes(0x00000333, 0x78).build();
    c.socket.write(Buffer.concat([bad, unknown]));
    const nack1 = await c.take((p) => p.command === 'generic_nack' && p.sequenceNumber === 0x77, 'generic_nack for the bad body');
    expect(nack1.commandStatus).toBe(0x02);
    const nack2 = await c.take((p) => p.command === 'generic_nack' && p.sequenceNumber === 0x78, 'generic_nack for the unknown id');
    expect(nack2.commandStatus).toBe(0x03);
    c.send({ command: 'enquire_link', sequenceNumber: 0x79, commandStatus: 0 });
    await c.take((p) => p.command === 'enquire_link_resp' && p.sequenceNumber === 0x79, 'enquire_link_resp');
    const t = sim.counters().totals;
    expect(t).toMatchObject({ malformedReceived: 1, genericNacksSent: 2, enquireLinksReceived: 1 });
  });

  it('closes the link on a bad command_length and keeps serving others', async () => {
    const { sim, port } = await simulator();
    const c = await client(port);
    await c.bind();
    c.socket.write(Buffer.from('00000004000000150000000000000001', 'hex'));
    await c.whenClosed;
    const d = await client(port);
    expect(await d.bind()).toBe(0);
    await until(() => sim.counters().binds[0]!.closed, 'first bind closed');
    expect(sim.counters().binds.map((b) => b.closed)).toEqual([true, false]);
    expect(sim.counters().totals.malformedReceived).toBe(1);
  });

  it('does not answer enquire_link when told not to; unbind gets unbind_resp and a close', async () => {
    const { sim, port } = await simulator({ behaviour: { answerEnquireLink: false } });
    const c = await client(port);
    await c.bind();
    c.send({ command: 'enquire_link', sequenceNumber: 50, commandStatus: 0 }, { command: 'unbind', sequenceNumber: 51, commandStatus: 0 });
    await c.take((p) => p.command === 'unbind_resp' && p.sequenceNumber === 51, 'unbind_resp');
    await c.whenClosed;
    expect(c.pending()).toHaveLength(0);
    expect(sim.counters().totals).toMatchObject({ enquireLinksReceived: 1, unbindsReceived: 1 });
  });

  it('drops the link after dropAfterSubmits without answering, and answers generic_nack by probability', async () => {
    const { sim, port } = await simulator({ behaviour: { dropAfterSubmits: 3, responseDelayMs: 1_000 } });
    const c = await client(port);
    await c.bind();
    c.send(c.submit('1', 'a'), c.submit('2', 'b'), c.submit('3', 'c'));
    await c.whenClosed;
    expect(c.pending().filter((p) => p.command === 'submit_sm_resp')).toHaveLength(0);
    expect(sim.recordedSubmits()).toHaveLength(3);
    sim.setBehaviour({ dropAfterSubmits: 0, responseDelayMs: 0, genericNackProbability: 1 });
    const d = await client(port);
    await d.bind();
    const pdu = d.submit('4', 'd');
    d.send(pdu);
    const nack = await d.take(isResp(pdu.sequenceNumber), 'generic_nack');
    expect(nack).toMatchObject({ command: 'generic_nack', commandStatus: 0x08 });
  });

  it('sends MO deliver_sm to a receiving bind and injects raw bytes into bound links', async () => {
    const { sim, port } = await simulator();
    expect(sim.sendMo({ source: '491511', destination: '12345', shortMessage: Buffer.from('hi'), dataCoding: 0 })).toBeUndefined();
    const c = await client(port);
    await c.bind();
    // An MO no deliver_sm can carry is refused before anything is sent or counted.
    expect(() => sim.sendMo({ source: '4'.repeat(21), destination: '12345', shortMessage: Buffer.from('hi'), dataCoding: 0 }))
      .toThrow(expect.objectContaining({ code: 'PDU_FIELD_INVALID' }));
    const sent = sim.sendMo({ source: '491511', destination: '12345', shortMessage: Buffer.from('hi'), dataCoding: 0 });
    expect(sent).toEqual({ bindId: 1, sequenceNumber: expect.any(Number) as number });
    const mo = await c.take(isDeliver, 'MO');
    expect(mo).toMatchObject({ esmClass: 0, sourceAddr: '491511', destinationAddr: '12345' });
    c.send({ command: 'deliver_sm_resp', sequenceNumber: mo.sequenceNumber, commandStatus: 0, messageId: '' });
    await until(() => sim.counters().totals.deliverSmRespReceived === 1, 'deliver_sm_resp');
    expect(sim.injectRaw(encodePdu({ command: 'enquire_link', sequenceNumber: 999, commandStatus: 0 }))).toBe(1);
    await c.take((p) => p.command === 'enquire_link' && p.sequenceNumber === 999, 'injected enquire_link');
    expect(sim.counters().totals.moSent).toBe(1);
  });

  it('serves TLS with the fixture certificate, verified by the client against the CA', async () => {
    const { sim, port } = await simulator({ tls: { cert: tlsFile('server.crt'), key: tlsFile('server.key') } });
    const c = await client(port, true);
    expect(await c.bind()).toBe(0);
    const pdu = c.submit('9', 'over tls');
    c.send(pdu);
    expect((await c.take(isResp(pdu.sequenceNumber), 'resp')).commandStatus).toBe(0);
    expect(sim.counters().totals.submitsReceived).toBe(1);
  });

  it('serves counters and takes behaviour, drop and reset over HTTP', async () => {
    const { sim, port } = await simulator();
    const { port: statusPort } = await sim.startStatusServer(0);
    const base = `http://127.0.0.1:${statusPort}`;
    const c = await client(port);
    await c.bind();
    const pdu = c.submit('1', 'x');
    c.send(pdu);
    await c.take(isResp(pdu.sequenceNumber), 'resp');
    const status = (await (await fetch(`${base}/status`)).json()) as SimulatorCounters;
    expect(status.totals.submitsReceived).toBe(1);
    expect(status.binds[0]!.connectedAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const set = await fetch(`${base}/behaviour`, { method: 'POST', body: JSON.stringify({ submitStatus: { '0x0b': 1 } }) });
    expect(set.status).toBe(200);
    const refused = c.submit('2', 'y');
    c.send(refused);
    expect((await c.take(isResp(refused.sequenceNumber), 'resp')).commandStatus).toBe(0x0b);
    expect((await fetch(`${base}/behaviour`, { method: 'POST', body: '{"submitStatus":{"0":0}}' })).status).toBe(400);
    expect((await fetch(`${base}/behaviour`, { method: 'POST', body: 'not json' })).status).toBe(400);

    expect((await fetch(`${base}/reset`, { method: 'POST' })).status).toBe(200);
    expect(sim.counters().totals.submitsReceived).toBe(0);
    expect(await (await fetch(`${base}/drop`, { method: 'POST' })).json()).toEqual({ dropped: 1 });
    await c.whenClosed;
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });
});
