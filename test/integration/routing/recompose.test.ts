/**
 * Text follows the upstream on failover, over real sockets: a long message composed for a GSM-7
 * upstream (UDH parts of septets) that fails over to a Latin-1 upstream (SAR parts) is composed
 * again for it, and what that SMSC received reassembles, read as Latin-1, to the text sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedSubmit } from '../../../src/simulator/options.js';
import { decodeShortMessage } from '../../../src/sms/text-codec.js';
import { until } from '../../support/engine.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { routingDaemon, smsc, untilAllFinal } from './rig.js';

const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** GSM-7 characters whose GSM-7 septet and Latin-1 byte differ (@ 0x00/0x40, é 0x05/0xE9, ü 0x7E/0xFC …), over three parts. */
const TEXT = `${'Grüße @ Köln: café à 5 $, Ändern_Ñ. '.repeat(9)}Ende`;

/** The parts received for `destination`, in SAR order, their bodies joined. */
function reassembleSar(parts: RecordedSubmit[]): { bytes: Buffer; refs: Set<number | undefined>; totals: Set<number | undefined> } {
  const ordered = [...parts].sort((x, y) => (x.tlvs?.sarSegmentSeqnum ?? 0) - (y.tlvs?.sarSegmentSeqnum ?? 0));
  return {
    bytes: Buffer.concat(ordered.map((p) => p.shortMessage)),
    refs: new Set(ordered.map((p) => p.tlvs?.sarMsgRefNum)),
    totals: new Set(ordered.map((p) => p.tlvs?.sarTotalSegments)),
  };
}

describe('text follows the upstream on failover', () => {
  it('a long message composed for a GSM-7 upstream, failed over to a Latin-1 one, arrives there decodable as the text sent', async () => {
    // g holds its one window slot for a minute: what is queued behind it has no part on the wire.
    const gsmSmsc = await smsc(cleanups, { responseDelayMs: 60_000 });
    const latinSmsc = await smsc(cleanups);
    const r = await routingDaemon(cleanups, {
      upstreams: [
        { name: 'g', smsc: gsmSmsc, extra: 'defaultAlphabet: gsm7, longMessages: udh, window: 1' },
        { name: 'l', smsc: latinSmsc, extra: 'defaultAlphabet: latin1, longMessages: sar' },
      ],
      routes: ['{ prefix: "49", upstreams: [g, l] }'],
    });
    await r.untilAvailable('g');
    await r.untilAvailable('l');

    const blocker = await r.send('491700000001', 'first');
    await until(() => gsmSmsc.received().length === 1, 10_000, 'the first message holding g\'s window');
    const long = await r.send('491700000002', TEXT);
    await until(async () => (await r.d.queue()).queued === 0, 10_000, 'the long message claimed for g');
    expect(await r.counter('smppd_route_sends_total', { route: '49', upstream: 'g' })).toBe(2);

    await gsmSmsc.stop();
    expect(await untilAllFinal(r, [blocker, long])).toEqual(['DELIVERED', 'DELIVERED']);

    // g saw only the first message; none of the long one's parts.
    expect(gsmSmsc.destinations()).toEqual(['491700000001']);
    const parts = latinSmsc.received().filter((s) => s.destinationAddr === '491700000002');
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.every((p) => p.dataCoding === 0 && (p.esmClass & 0x40) === 0)).toBe(true);
    const { bytes, refs, totals } = reassembleSar(parts);
    expect(refs.size).toBe(1);
    expect([...totals]).toEqual([parts.length]);
    expect(decodeShortMessage(bytes, 0, 'latin1')).toBe(TEXT);
    expect(bytes.equals(Buffer.from(TEXT, 'latin1'))).toBe(true);
    expect(await r.counter('smppd_failover_moved_total', { from: 'g', to: 'l' })).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
