/**
 * Two PostgresStore instances on one schema, as two smppd processes whose binds share one SMSC
 * account: the SMSC delivers the parts of one MO message on any bind, so they come in on both
 * instances at once, and delivers some parts again on the other instance's bind. Every message is
 * stored exactly once, whole, with one event.
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { frameMo } from '../../../src/sms/inbound.js';
import { sessionOptions } from '../../../src/store/postgres/db.js';
import { lockSpaces } from '../../../src/store/postgres/locks.js';
import { keyParams, keyText, type InboundKey } from '../../../src/store/rules/inbound-parts.js';
import { encodeMessage } from '../../../src/sms/segment.js';
import type { InboundPartOutcome, InboundPartRecord } from '../../../src/store/inbound.js';
import { encodeOptions } from '../../support/sms.js';
import { describePg, PG_URL, pgInstancesPerTest } from './pg-store.js';

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

  it('a sweep and a part of a message it forgets at the same moment do not deadlock: the sweep locks before it deletes', async () => {
    // A message stored long ago is remembered in inbound_assembled, and a part of a new message
    // under its key waits since long ago too: the sweep stores that one and forgets the other.
    const key: InboundKey = { upstream: 'up1', source: '447700900999', destination: '12345', scheme: 'udh8', ref: 5, total: 2 };
    await t.schema.sql(`INSERT INTO inbound_assembled (upstream, source, destination, scheme, ref, total, digests, assembled_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, 100)`, [...keyParams(key), Buffer.alloc(32)]);
    await t.schema.sql(`INSERT INTO inbound_parts (upstream, source, destination, scheme, ref, total, seq, data_coding, body, udh_invalid, default_alphabet, client, events, received_at)
      VALUES ($1, $2, $3, $4, $5, $6, 1, 0, $7, 0, 'gsm7', 'acme', 1, 100)`, [...keyParams(key), Buffer.from('hi')]);
    const retries = t.a.stats.retries;

    // A part's transaction, as recordInboundPart runs it, holds the message's lock ...
    const part = new pg.Client({ connectionString: PG_URL, options: sessionOptions(t.schema.name) });
    await part.connect();
    try {
      await part.query('BEGIN');
      await part.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [lockSpaces(t.schema.name).inbound, keyText(key)]);
      const pid = (await part.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      // ... when the sweep starts and waits for that lock ...
      const swept = t.a.expireInboundParts(5_000, 10);
      for (let waiting = 0; waiting === 0;) {
        waiting = (await t.schema.sql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks w JOIN pg_locks h
          ON h.locktype = 'advisory' AND h.granted AND h.pid = $1 AND (w.classid, w.objid, w.objsubid) = (h.classid, h.objid, h.objsubid)
          WHERE w.locktype = 'advisory' AND NOT w.granted`, [pid]))[0]!.n;
      }
      // ... and then forgets the stored message ('other': a new message reuses its reference).
      const forgot = await part.query('DELETE FROM inbound_assembled WHERE upstream = $1 AND source = $2 AND destination = $3 AND scheme = $4 AND ref = $5 AND total = $6',
        keyParams(key)).then((r) => r.rowCount, (e: unknown) => e);
      await part.query('COMMIT');
      expect(forgot).toBe(1);
      expect((await swept).map((m) => m.source)).toEqual([key.source]);
      // Not chosen as a deadlock's victim and run again either.
      expect(t.a.stats.retries).toBe(retries);
    } finally {
      await part.end();
    }
  });
});
