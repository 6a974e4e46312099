/**
 * Two PostgresStore instances on one schema, as two smppd processes whose binds share one SMSC
 * account: the SMSC delivers the parts of one MO message on any bind, so they come in on both
 * instances at once, and delivers some parts again on the other instance's bind. Every message is
 * stored exactly once, whole, with one event.
 */
import { expect, it } from 'vitest';
import { frameMo } from '../../../src/sms/inbound.js';
import { encodeMessage } from '../../../src/sms/segment.js';
import type { InboundPartOutcome, InboundPartRecord } from '../../../src/store/store.js';
import { encodeOptions } from '../../support/sms.js';
import { describePg, pgInstancesPerTest } from './pg-store.js';

const MESSAGES = 60;

/** The parts of message `n`: 2 to 4 of them, each message from its own sender under reference n. */
function partsOf(n: number): { text: string; parts: InboundPartRecord[] } {
  const text = `${n}:`.padEnd(153 * (1 + (n % 3)) + 10, String.fromCharCode(97 + (n % 26)));
  const encoded = encodeMessage(text, encodeOptions({ reference: n }));
  if (!encoded.ok) throw new Error(encoded.error.message);
  const parts = encoded.parts.map((p, i) => {
    const { piece, concat } = frameMo({ dataCoding: p.dataCoding, esmClass: p.esmClass, shortMessage: p.shortMessage });
    return {
      upstream: 'up1', client: 'acme', events: true, source: `4477009${String(n).padStart(5, '0')}`, destination: '12345',
      scheme: concat!.scheme, ref: concat!.ref, total: concat!.total, piece, defaultAlphabet: 'gsm7' as const, receivedAt: 1_000 + i,
    };
  });
  return { text, parts };
}

describePg('PostgresStore shared by two instances: inbound parts', () => {
  const t = pgInstancesPerTest();

  it('parts of one MO arriving on both instances at once make one whole message, stored once', async () => {
    const messages = Array.from({ length: MESSAGES }, (_, n) => partsOf(n));
    // Every part on alternating instances, all at once; every message's first part again on the
    // other instance (the SMSC delivering after a lost deliver_sm_resp), also at once.
    const calls: Array<Promise<InboundPartOutcome>> = [];
    messages.forEach((m, n) => m.parts.forEach((p, i) => {
      calls.push(((n + i) % 2 === 0 ? t.a : t.b).recordInboundPart(p));
      if (i === 0) calls.push(((n + i) % 2 === 0 ? t.b : t.a).recordInboundPart(p));
    }));
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.kind === 'stored')).toHaveLength(MESSAGES);
    expect(outcomes.filter((o) => o.kind === 'repeat')).toHaveLength(MESSAGES);

    expect(await t.schema.sql('SELECT * FROM inbound_parts')).toEqual([]);
    const stored = await t.schema.sql<{ source: string; text: string; parts: number; missing_parts: string | null }>(
      'SELECT source, text, parts, missing_parts FROM inbound ORDER BY source');
    expect(stored).toEqual(messages.map((m) => ({ source: m.parts[0]!.source, text: m.text, parts: m.parts.length, missing_parts: null })));
    const events = await t.schema.sql<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE kind = 'inbound'");
    expect(events[0]!.n).toBe(MESSAGES);
  });

  it('two instances sweeping at once store an incomplete message once', async () => {
    for (let n = 0; n < MESSAGES; n++) await (n % 2 === 0 ? t.a : t.b).recordInboundPart(partsOf(n).parts[0]!);
    const [fromA, fromB] = await Promise.all([t.a.expireInboundParts(5_000, 1_000), t.b.expireInboundParts(5_000, 1_000)]);
    expect(fromA.length + fromB.length).toBe(MESSAGES);
    expect(new Set([...fromA, ...fromB].map((e) => e.source)).size).toBe(MESSAGES);
    expect(await t.schema.sql('SELECT * FROM inbound_parts')).toEqual([]);
    const count = await t.schema.sql<{ n: number }>('SELECT count(*)::int AS n FROM inbound');
    expect(count[0]!.n).toBe(MESSAGES);
  });
});
