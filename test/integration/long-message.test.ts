/**
 * The domain on the engine's submit path, end to end over real sockets: a long message is
 * composed into parts for the upstream's settings, the simulator receives exactly those parts,
 * and its receipts, read by the upstream's receipt reader, move each part's status and the
 * message's. The part index here is a map; the store takes its place in the daemon.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import { MessageComposer, type ComposeSettings, type OutgoingMessage } from '../../src/dispatch/compose.js';
import { UpstreamReceipts, type ReadReceipt } from '../../src/dispatch/receipts.js';
import type { DataSmPdu, DeliverSmPdu } from '../../src/smpp/pdu.js';
import type { Pool } from '../../src/smpp/pool.js';
import type { ReceiptIdFormat } from '../../src/sms/message-id.js';
import { responseKey } from '../../src/sms/message-id.js';
import { aggregateStatus, mergeStatus, type DeliveryStatus } from '../../src/sms/status.js';
import type { BehaviourPatch } from '../../src/simulator/behaviour.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { makePool, until } from '../support/engine.js';

const clock = new SystemClock();
const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of running.splice(0).reverse()) await stop();
});

const SETTINGS: ComposeSettings = {
  defaultAlphabet: 'gsm7', nationalLanguageShift: false, longMessages: 'udh', udhReference: 8, maxParts: 10, requestReceipts: true,
};

// 150 UTF-16 units with Cyrillic, an em dash and emoji (surrogate pairs): three UCS-2 parts of ≤ 67 units.
const LONG_UNICODE = `Привет — ${'😀'.repeat(10)} ${'абвгдежзий'.repeat(12)}`.slice(0, 150);

interface TrackedPart {
  messageKey: string;
  status: DeliveryStatus;
  smscId: string;
  reasons: string[];
}

/**
 * What the daemon does with responses and receipts, on a map: parts indexed by the normalised
 * submit_sm_resp id; a receipt that finds no part yet is parked and tried again when ids arrive.
 */
class Tracker {
  readonly parts = new Map<string, TrackedPart>();
  readonly messages = new Map<string, string[]>();
  readonly parked: ReadReceipt[] = [];
  readonly ignored: string[] = [];
  constructor(readonly receipts: UpstreamReceipts) {}

  deliver = async (_upstream: string, _bind: string, pdu: DeliverSmPdu | DataSmPdu): Promise<number> => {
    if (!UpstreamReceipts.isReceipt(pdu)) return 0;
    this.#apply(this.receipts.read(pdu));
    return 0;
  };

  accepted(messageKey: string, smscIds: string[]): void {
    const keys = smscIds.map(responseKey);
    this.messages.set(messageKey, keys);
    smscIds.forEach((id, i) => this.parts.set(keys[i]!, { messageKey, status: 'SENT', smscId: id, reasons: [] }));
    for (const r of this.parked.splice(0)) this.#apply(r);
  }

  messageStatus(messageKey: string): DeliveryStatus {
    return aggregateStatus((this.messages.get(messageKey) ?? []).map((k) => this.parts.get(k)!.status));
  }

  #apply(r: ReadReceipt): void {
    const found = r.keys.filter((k) => this.parts.has(k));
    if (found.length === 0) {
      this.parked.push(r);
      return;
    }
    this.receipts.found(r.receipt.id!, found);
    const part = this.parts.get(found[0]!)!;
    if (r.outcome.status === null) return;
    const merged = mergeStatus(part.status, r.outcome.status);
    if (merged.ignored) this.ignored.push(merged.ignored);
    part.status = merged.status;
    if (r.outcome.reason) part.reasons.push(r.outcome.reason);
  }
}

async function setup(behaviour: BehaviourPatch, receiptIdFormat: ReceiptIdFormat = 'auto') {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'smppclient1', password: 'password' }], record: true,
    behaviour: { ...behaviour, receipts: { delayMs: { min: 0, max: 20 }, ...behaviour.receipts } },
  }, clock, silentLog);
  const { port } = await sim.start();
  const tracker = new Tracker(new UpstreamReceipts({ receiptIdFormat, smscTimeZone: 'UTC' }));
  const pool: Pool = makePool({ port, binds: 2 }, clock, { deliver: tracker.deliver });
  pool.start();
  running.push(async () => {
    await pool.stop(100);
    await sim.stop();
  });
  return { sim, pool, tracker };
}

async function send(pool: Pool, tracker: Tracker, composer: MessageComposer, message: OutgoingMessage, key: string) {
  const { parts } = composer.compose(message);
  const outcome = await pool.submit('sim', parts);
  const ids = outcome.parts.map((p) => (p.kind === 'accepted' ? p.messageId : `not accepted: ${p.kind}`));
  tracker.accepted(key, ids);
  return parts.length;
}

/** UCS-2 big-endian to text, without the domain's decoder. */
const ucs2 = (b: Buffer): string => Buffer.from(b).swap16().toString('utf16le');

describe('a long message through the simulator', () => {
  it('arrives as correct UDH parts and every receipt updates its part (ids hex in responses, decimal in receipts)', async () => {
    const { sim, pool, tracker } = await setup({ messageIdFormat: 'hex', receipts: { messageIdInReceipt: 'decimal' } });
    const composer = new MessageComposer(SETTINGS, 0x41);
    const n = await send(pool, tracker, composer, { source: 'smppd', destination: '4915112345678', text: LONG_UNICODE }, 'm1');
    expect(n).toBe(3);

    const got = sim.recordedSubmits();
    expect(got).toHaveLength(3);
    got.forEach((s, i) => {
      expect(s.dataCoding).toBe(8);
      expect(s.esmClass & 0x40).toBe(0x40);
      expect(s.registeredDelivery).toBe(1);
      expect(s.sourceAddr).toBe('smppd');
      expect(s.destinationAddr).toBe('4915112345678');
      // UDH: IE 0x00 (8-bit reference), length 3, reference, total, sequence.
      expect([...s.shortMessage.subarray(0, 6)]).toEqual([0x05, 0x00, 0x03, 0x41, 3, i + 1]);
      expect(s.shortMessage.length - 6).toBeLessThanOrEqual(134);
    });
    expect(got.map((s) => ucs2(s.shortMessage.subarray(6))).join('')).toBe(LONG_UNICODE);

    await until(() => tracker.messageStatus('m1') === 'DELIVERED', 5_000, 'every part DELIVERED');
    expect([...tracker.parts.values()].map((p) => p.status)).toEqual(['DELIVERED', 'DELIVERED', 'DELIVERED']);
    expect(tracker.parked).toHaveLength(0);
  });

  it('in SAR mode the parts carry sar TLVs and no UDH, and references rotate per message', async () => {
    const { sim, pool, tracker } = await setup({});
    const composer = new MessageComposer({ ...SETTINGS, longMessages: 'sar' }, 0xfffe);
    await send(pool, tracker, composer, { source: '4917000000001', destination: '4915112345678', text: LONG_UNICODE }, 'a');
    await send(pool, tracker, composer, { source: '4917000000001', destination: '4915112345679', text: LONG_UNICODE }, 'b');
    const got = sim.recordedSubmits();
    expect(got).toHaveLength(6);
    expect(got.map((s) => s.tlvs?.sarMsgRefNum)).toEqual([0xfffe, 0xfffe, 0xfffe, 0xffff, 0xffff, 0xffff]);
    expect(got.map((s) => s.tlvs?.sarSegmentSeqnum)).toEqual([1, 2, 3, 1, 2, 3]);
    expect(got.every((s) => s.tlvs?.sarTotalSegments === 3 && (s.esmClass & 0x40) === 0)).toBe(true);
    expect(got.slice(0, 3).map((s) => ucs2(s.shortMessage)).join('')).toBe(LONG_UNICODE);
    await until(() => tracker.messageStatus('a') === 'DELIVERED' && tracker.messageStatus('b') === 'DELIVERED', 5_000, 'both DELIVERED');
  });

  it('one undeliverable part makes the message FAILED with the stat and err as reason', async () => {
    const { pool, tracker } = await setup({ receipts: { outcomes: { UNDELIV: 1 } } }, 'same');
    const composer = new MessageComposer(SETTINGS);
    await send(pool, tracker, composer, { source: 'smppd', destination: '4915112345678', text: 'x'.repeat(200) }, 'f');
    await until(() => [...tracker.parts.values()].every((p) => p.status === 'FAILED'), 5_000, 'parts FAILED');
    expect(tracker.messageStatus('f')).toBe('FAILED');
    expect([...tracker.parts.values()][0]!.reasons[0]).toMatch(/^stat:UNDELIV err:\d+$/);
  });

  it('a receipt before its submit_sm_resp is parked, then matched; a duplicate changes nothing', async () => {
    const { pool, tracker } = await setup({ receipts: { beforeResponseProbability: 1, duplicateProbability: 1, delayMs: 0 } });
    const composer = new MessageComposer(SETTINGS);
    await send(pool, tracker, composer, { source: 'smppd', destination: '4915112345678', text: 'short' }, 's');
    await until(() => tracker.messageStatus('s') === 'DELIVERED', 5_000, 'DELIVERED');
    await until(() => tracker.ignored.includes('duplicate'), 5_000, 'the duplicate receipt');
    expect(tracker.messageStatus('s')).toBe('DELIVERED');
  });
});
