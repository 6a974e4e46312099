/**
 * Interop with an SMPP implementation smppd did not write: Debian's Net::SMPP (perl,
 * libnet-smpp-perl). Our encoder and decoder are built over the same tables, so a golden-hex
 * test written by us can share a mistake with them; Net::SMPP cannot. Both directions:
 *
 * - smppd's pool against an SMSC written with Net::SMPP (net-smpp-smsc.pl): Net::SMPP prints
 *   what it decoded from each of our PDUs, and we compare it with what we meant to send.
 * - an ESME written with Net::SMPP (net-smpp-esme.pl) against smppd's simulator: what the
 *   simulator decoded is compared with what the perl side says it passed to Net::SMPP, and what
 *   Net::SMPP decoded from the simulator's receipts is checked field by field.
 *
 * Skipped (with a message) when `perl -MNet::SMPP -e1` fails. SMPPD_INTEROP_PERL names another
 * perl (e.g. /bin/false to see the skip).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { submitSmDefaults, type DeliverSmPdu, type Tlvs } from '../../src/smpp/pdu.js';
import type { Pool } from '../../src/smpp/pool.js';
import type { SubmitPart } from '../../src/smpp/part-outcome.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { makePool } from '../support/engine.js';
import { JsonLinesProcess, type JsonEvent } from '../support/json-lines-process.js';

const PERL = process.env['SMPPD_INTEROP_PERL'] ?? 'perl';
const netSmppAvailable = spawnSync(PERL, ['-MNet::SMPP', '-e1'], { stdio: 'ignore' }).status === 0;
if (!netSmppAvailable) {
  // eslint-disable-next-line no-console -- the one place a developer learns why this suite did not run
  console.warn(`Net::SMPP interop tests skipped: \`${PERL} -MNet::SMPP -e1\` failed. Install Debian's libnet-smpp-perl `
    + '(`apt-get install libnet-smpp-perl`; `.ci/run` does it) to run them.');
}

const script = (name: string): string => fileURLToPath(new URL(name, import.meta.url));
const clock = new SystemClock();
const hex = (b: Buffer): string => b.toString('hex');
/** Perl's startup, a bind and a few round trips; generous so a loaded CI box does not flake. */
const SLOW = 60_000;

const children: JsonLinesProcess[] = [];
const pools: Pool[] = [];
const sims: SmscSimulator[] = [];

afterAll(async () => {
  for (const p of pools) await p.stop(100);
  for (const s of sims) await s.stop();
  for (const c of children) c.kill();
});

function perl(name: string, args: string[]): JsonLinesProcess {
  const child = new JsonLinesProcess(PERL, [script(name), ...args]);
  children.push(child);
  return child;
}

/** A TLV as Net::SMPP reports it: its name if it knows the tag (else null), and the raw value. */
interface PerlTlv {
  name: string | null;
  hex: string;
}

/** A 3-octet concatenation user data header (GSM 03.40 IEI 0x00): reference, total, this part. */
function udh(ref: number, total: number, seq: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, ref, total, seq]);
}

/** UCS-2 as SMPP carries it for data_coding 8: big-endian UTF-16. */
function ucs2(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

function part(fields: Partial<SubmitPart> & Pick<SubmitPart, 'destinationAddr' | 'shortMessage'>): SubmitPart {
  return { ...submitSmDefaults(), sourceAddr: 'smppd', dataCoding: 0, registeredDelivery: 1, ...fields };
}

/** What Net::SMPP should report for one of our submit_sm: every mandatory field, then the TLVs. */
function perlView(p: SubmitPart, tlvs: Record<string, PerlTlv>): Record<string, unknown> {
  return {
    service_type: p.serviceType,
    source_addr_ton: p.sourceAddrTon, source_addr_npi: p.sourceAddrNpi, source_addr: p.sourceAddr,
    dest_addr_ton: p.destAddrTon, dest_addr_npi: p.destAddrNpi, destination_addr: p.destinationAddr,
    esm_class: p.esmClass, protocol_id: p.protocolId, priority_flag: p.priorityFlag,
    schedule_delivery_time: p.scheduleDeliveryTime, validity_period: p.validityPeriod,
    registered_delivery: p.registeredDelivery, replace_if_present_flag: p.replaceIfPresentFlag,
    data_coding: p.dataCoding, sm_default_msg_id: p.smDefaultMsgId,
    short_message_hex: hex(p.shortMessage),
    tlvs,
  };
}

/** SMPP v3.4 §5.3.2 sizes, written out here rather than taken from our codec: tag → value hex. */
function tlvHex(t: Tlvs | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!t) return out;
  const int = (n: number, octets: number) => n.toString(16).padStart(octets * 2, '0');
  if (t.receiptedMessageId !== undefined) out['0x001e'] = hex(Buffer.from(`${t.receiptedMessageId}\0`, 'latin1'));
  if (t.userMessageReference !== undefined) out['0x0204'] = int(t.userMessageReference, 2);
  if (t.sarMsgRefNum !== undefined) out['0x020c'] = int(t.sarMsgRefNum, 2);
  if (t.sarTotalSegments !== undefined) out['0x020e'] = int(t.sarTotalSegments, 1);
  if (t.sarSegmentSeqnum !== undefined) out['0x020f'] = int(t.sarSegmentSeqnum, 1);
  if (t.networkErrorCode !== undefined) out['0x0423'] = hex(t.networkErrorCode);
  if (t.messagePayload !== undefined) out['0x0424'] = hex(t.messagePayload);
  if (t.messageState !== undefined) out['0x0427'] = int(t.messageState, 1);
  for (const raw of t.other ?? []) out[`0x${raw.tag.toString(16).padStart(4, '0')}`] = hex(raw.value);
  return out;
}

const str = (e: JsonEvent, k: string): string => e[k] as string;
const num = (e: JsonEvent, k: string): number => e[k] as number;

describe.skipIf(!netSmppAvailable)('interop with Net::SMPP (Debian libnet-smpp-perl)', () => {
  it('smppd binds to a Net::SMPP SMSC, which decodes every submit_sm exactly as we meant it; its receipts and enquire_link reach us; we unbind', async () => {
    const smsc = perl('net-smpp-smsc.pl', ['0', 'smppclient1', 'password']);
    const [listening] = await smsc.next('listening', 1, SLOW);
    const port = num(listening!, 'port');

    const receipts: DeliverSmPdu[] = [];
    let receiptArrived: () => void = () => {};
    const pool = makePool({ port, enquireLinkMs: 200 }, clock, {
      deliver: async (_upstream, _bind, pdu) => {
        if (pdu.command === 'deliver_sm') receipts.push(pdu);
        receiptArrived();
        return 0;
      },
    });
    pools.push(pool);
    pool.start();

    const payload = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37 + 11) % 256)); // 0x00 and 0xff included
    const messages: Array<Array<{ part: SubmitPart; tlvs: Record<string, PerlTlv> }>> = [
      // GSM 03.38 default alphabet, unpacked: '@' is 0x00, '€' is 0x1b 0x65.
      [{ part: part({ sourceAddrTon: 5, destinationAddr: '4915112345678', shortMessage: Buffer.concat([Buffer.from('Hello Net::SMPP ', 'latin1'), Buffer.from([0x00, 0x20, 0x35, 0x1b, 0x65])]) }), tlvs: {} }],
      // UCS-2 in two parts, each with a user data header (esm_class UDHI).
      [1, 2].map((n) => ({
        part: part({ destinationAddr: '4915187654321', esmClass: 0x40, dataCoding: 0x08, shortMessage: Buffer.concat([udh(0x5a, 2, n), ucs2(n === 1 ? 'Grüße 👋 ' : '你好 ¡olé!')]) }),
        tlvs: {},
      })),
      // SAR TLVs, a user_message_reference, and a vendor TLV neither side names.
      [1, 2].map((n) => ({
        part: part({
          destinationAddr: '4915100000001', shortMessage: Buffer.from(`sar part ${n}`, 'latin1'),
          tlvs: { sarMsgRefNum: 0xbeef, sarTotalSegments: 2, sarSegmentSeqnum: n, ...(n === 1 ? { userMessageReference: 0x0102, other: [{ tag: 0x1410, value: Buffer.from([0xca, 0xfe, 0x00]) }] } : {}) },
        }),
        tlvs: {
          '0x020c': { name: 'sar_msg_ref_num', hex: 'beef' },
          '0x020e': { name: 'sar_total_segments', hex: '02' },
          '0x020f': { name: 'sar_segment_seqnum', hex: `0${n}` },
          ...(n === 1 ? { '0x0204': { name: 'user_message_reference', hex: '0102' }, '0x1410': { name: null, hex: 'cafe00' } } : {}),
        },
      })),
      // message_payload past short_message's 254 octets (a two-octet TLV length), short_message empty.
      [{ part: part({ destinationAddr: '4915100000002', shortMessage: Buffer.alloc(0), tlvs: { messagePayload: payload } }), tlvs: { '0x0424': { name: 'message_payload', hex: hex(payload) } } }],
    ];
    const expected = messages.flat();

    const outcomes = await Promise.all(messages.map((m) => pool.submit('sim', m.map((x) => x.part))));

    // What Net::SMPP decoded from each of our submit_sm, field by field and byte for byte.
    const submits = await smsc.next('submit_sm', expected.length, SLOW);
    const idOf = new Map<SubmitPart, string>();
    for (const { part: p, tlvs } of expected) {
      const seen = submits.filter((s) => s['destination_addr'] === p.destinationAddr && s['short_message_hex'] === hex(p.shortMessage));
      expect(seen, `Net::SMPP saw the part to ${p.destinationAddr} ${hex(p.shortMessage)} once`).toHaveLength(1);
      const { event: _e, seq: _s, message_id: messageId, ...decoded } = seen[0]!;
      expect(decoded).toEqual(perlView(p, tlvs));
      idOf.set(p, messageId as string);
    }

    // Every part accepted under the id the perl SMSC gave it.
    messages.forEach((m, i) => {
      expect(outcomes[i]!.parts.map((o) => (o.kind === 'accepted' ? o.messageId : o.kind))).toEqual(m.map((x) => idOf.get(x.part)));
    });

    // One receipt per part reached our deliver handler, decoded as Net::SMPP encoded it.
    if (receipts.length < expected.length) {
      await new Promise<void>((resolve) => {
        receiptArrived = () => { if (receipts.length >= expected.length) resolve(); };
      });
    }
    const sent = await smsc.next('deliver_sm_sent', expected.length, SLOW);
    expect(receipts).toHaveLength(expected.length);
    for (const { part: p } of expected) {
      const id = idOf.get(p)!;
      const r = receipts.filter((d) => d.tlvs?.receiptedMessageId === id);
      expect(r, `one receipt for ${id}`).toHaveLength(1);
      const text = str(sent.find((s) => s['message_id'] === id)!, 'short_message');
      expect(r[0]).toMatchObject({
        esmClass: 0x04, dataCoding: 0, serviceType: '', protocolId: 0, registeredDelivery: 0,
        sourceAddrTon: p.destAddrTon, sourceAddrNpi: p.destAddrNpi, sourceAddr: p.destinationAddr,
        destAddrTon: p.sourceAddrTon, destAddrNpi: p.sourceAddrNpi, destinationAddr: p.sourceAddr,
        tlvs: { receiptedMessageId: id, messageState: 2 },
      });
      expect(r[0]!.tlvs?.other).toBeUndefined();
      expect(r[0]!.shortMessage.toString('latin1')).toBe(text);
    }

    // Net::SMPP read each deliver_sm_resp: status 0, the receipt's sequence number, an empty message_id.
    const resps = await smsc.next('deliver_sm_resp', expected.length, SLOW);
    expect(resps.map((e) => num(e, 'seq')).sort((a, b) => a - b)).toEqual(sent.map((e) => num(e, 'seq')).sort((a, b) => a - b));
    for (const e of resps) expect(e).toMatchObject({ status: 0, message_id: '', tlvs: {} });

    // enquire_link both ways: ours reached Net::SMPP, and our answer to its probe decoded as status 0.
    await smsc.next('enquire_link', 1, SLOW);
    const [probeAnswer] = await smsc.next('enquire_link_resp', 1, SLOW);
    expect(probeAnswer).toMatchObject({ status: 0 });

    // Graceful stop: unbind, Net::SMPP answers, we close the connection.
    await pool.stop(5_000);
    const [eof] = await smsc.next('eof', 1, SLOW);
    expect(eof).toMatchObject({ after_unbind: true });
    expect(smsc.all('unbind')).toHaveLength(1);
    expect((await smsc.exited()).code).toBe(0);

    expect(smsc.all('bind_transceiver')).toEqual([expect.objectContaining({
      system_id: 'smppclient1', password: 'password', system_type: '', interface_version: 0x34,
      addr_ton: 0, addr_npi: 0, address_range: '', status: 0,
    })]);
    // Net::SMPP parsed everything; its only complaint is the vendor tag it has no name for.
    expect(smsc.all('warning').map((w) => str(w, 'text'))).toEqual([expect.stringMatching(/^Unknown tag \(offset \d+\): 5136, len=3,/)]);
    expect(smsc.all('other')).toEqual([]);
  }, SLOW);

  it('a Net::SMPP ESME binds to our simulator, whose decoding matches what Net::SMPP sent; it decodes our receipts and responses', async () => {
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true,
      behaviour: { receipts: { delayMs: 0 } },
    }, clock, silentLog);
    sims.push(sim);
    const { port } = await sim.start();

    const esme = perl('net-smpp-esme.pl', [String(port), 'smppclient1', 'password']);
    const exit = await esme.exited();
    expect(exit.code, `net-smpp-esme.pl failed; events: ${JSON.stringify(esme.events)}; stderr: ${esme.stderr}`).toBe(0);
    expect(esme.all('done')).toHaveLength(1);
    expect(esme.all('bind_transceiver_resp')).toEqual([expect.objectContaining({ status: 0, system_id: 'smppd-sim' })]);

    // What the simulator decoded equals what the perl side handed to Net::SMPP.
    const sent = esme.all('submit_sm');
    expect(sent).toHaveLength(4);
    const recorded = sim.recordedSubmits();
    expect(recorded).toHaveLength(sent.length);
    for (const s of sent) {
      const r = recorded.find((x) => x.sequenceNumber === num(s, 'seq'));
      expect(r, `the simulator recorded seq ${num(s, 'seq')}`).toBeDefined();
      expect({
        source_addr: r!.sourceAddr, destination_addr: r!.destinationAddr, esm_class: r!.esmClass,
        data_coding: r!.dataCoding, registered_delivery: r!.registeredDelivery,
        short_message_hex: hex(r!.shortMessage), tlvs: tlvHex(r!.tlvs),
      }).toEqual({
        source_addr: s['source_addr'], destination_addr: s['destination_addr'], esm_class: s['esm_class'],
        data_coding: s['data_coding'], registered_delivery: s['registered_delivery'],
        short_message_hex: s['short_message_hex'], tlvs: s['tlvs'],
      });
    }

    // submit_sm_resp: Net::SMPP read the simulator's ids.
    const resps = esme.all('submit_sm_resp');
    expect(resps).toHaveLength(sent.length);
    for (const e of resps) {
      expect(e['status']).toBe(0);
      expect(e['message_id']).toBe(recorded.find((x) => x.sequenceNumber === num(e, 'seq'))!.messageId);
      expect(e['message_id']).toMatch(/^[0-9a-f]{16}$/);
    }

    // The receipts, as Net::SMPP decoded them.
    const delivered = esme.all('deliver_sm');
    expect(delivered).toHaveLength(sent.length);
    for (const s of sent) {
      const id = str(resps.find((e) => e['seq'] === s['seq'])!, 'message_id');
      const d = delivered.filter((e) => (e['tlvs'] as Record<string, PerlTlv>)['0x001e']?.hex === hex(Buffer.from(`${id}\0`, 'latin1')));
      expect(d, `one receipt for ${id}`).toHaveLength(1);
      expect(d[0]).toMatchObject({
        service_type: '', esm_class: 0x04, data_coding: 0, protocol_id: 0, priority_flag: 0, registered_delivery: 0,
        schedule_delivery_time: '', validity_period: '', replace_if_present_flag: 0, sm_default_msg_id: 0,
        source_addr_ton: s['dest_addr_ton'], source_addr_npi: s['dest_addr_npi'], source_addr: s['destination_addr'],
        dest_addr_ton: s['source_addr_ton'], dest_addr_npi: s['source_addr_npi'], destination_addr: s['source_addr'],
        tlvs: {
          '0x001e': { name: 'receipted_message_id', hex: hex(Buffer.from(`${id}\0`, 'latin1')) },
          '0x0427': { name: 'message_state', hex: '02' },
        },
      });
      const text = Buffer.from(str(d[0]!, 'short_message_hex'), 'hex').toString('latin1');
      expect(text).toMatch(new RegExp(`^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:`));
    }
    const gsm = delivered.find((e) => e['source_addr'] === '4915112345678')!;
    expect(Buffer.from(str(gsm, 'short_message_hex'), 'hex').toString('latin1')).toMatch(/ text:Hello from Net::SMPP$/);

    expect(esme.all('enquire_link_resp')).toEqual([expect.objectContaining({ status: 0 })]);
    expect(esme.all('unbind_resp')).toEqual([expect.objectContaining({ status: 0 })]);
    expect(esme.all('warning')).toEqual([]);
    expect(esme.all('other')).toEqual([]);

    // And what the simulator saw of the conversation.
    const totals = sim.counters().totals;
    expect(totals).toMatchObject({
      submitsReceived: 4, receiptsSent: 4, deliverSmResponses: { ESME_ROK: 4 }, enquireLinksReceived: 1, unbindsReceived: 1,
      genericNacksReceived: 0, genericNacksSent: 0, malformedReceived: 0,
    });
  }, SLOW);
});
