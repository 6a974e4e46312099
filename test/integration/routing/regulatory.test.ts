/**
 * The regulatory ids (peId, templateId, telemarketerId) over real sockets, one daemon and an SMSC
 * per upstream: each part of a long sendSms, and of a sendbulk, reaches the SMSC with the three in
 * its upstream's tags; an upstream without the mapping gets none and the log says so once; one
 * with `requireRegulatory` refuses a send without them (400 VALIDATION naming the missing field);
 * and a queued message that fails over is sent in the new upstream's tags. On a PostgreSQL store,
 * a message handed to the pool straight from its accept carries them too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Log } from '../../../src/core/log.js';
import type { RecordedSubmit } from '../../../src/simulator/options.js';
import { until } from '../../support/engine.js';
import { ERROR_FIELDS, bulkForm } from '../../support/http.js';
import { describePg, PG_URL, pgSchema } from '../postgres/pg-store.js';
import type { Cleanups } from '../../support/daemon-child.js';
import { TOKENS, routingDaemon, smsc, untilAllFinal, type RoutingDaemon, type Smsc } from './rig.js';

const cleanups: Cleanups = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const IDS = { peId: '1101234567890123456', templateId: '1107160000000000001', telemarketerId: '1702000000000000009' };
const LONG = `DLT ${'registered template text '.repeat(14)}`;
const TAGS = 'regulatoryTlvs: { peId: 0x1400, templateId: 0x1401, telemarketerId: 0x1402 }';

/** What a part carried in vendor TLVs, as [tag, value] with the value read as Latin-1. */
const vendorTlvs = (s: RecordedSubmit) => (s.tlvs?.other ?? []).map((t) => [t.tag, t.value.toString('latin1')]);
const inTags = (pe: number, template: number, tm: number) =>
  [[pe, `${IDS.peId}\0`], [template, `${IDS.templateId}\0`], [tm, `${IDS.telemarketerId}\0`]];

/** Records the warnings the daemon logs. */
function warningLog(warnings: Array<Record<string, unknown>>): Log {
  const log: Log = {
    error: () => {}, info: () => {}, debug: () => {},
    warn: (fields) => { warnings.push(fields as Record<string, unknown>); },
    child: () => log,
  };
  return log;
}

describe('regulatory ids travel to the SMSC in each upstream\'s TLVs', () => {
  let r: RoutingDaemon;
  let dlt: Smsc;
  let plain: Smsc;
  let strict: Smsc;
  let slow: Smsc;
  let backup: Smsc;
  const warnings: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    [dlt, plain, strict, backup] = await Promise.all([smsc(cleanups), smsc(cleanups), smsc(cleanups), smsc(cleanups)]);
    // `slow` holds its one window slot for a minute: what is queued behind it has no part on the wire.
    slow = await smsc(cleanups, { responseDelayMs: 60_000 });
    r = await routingDaemon(cleanups, {
      upstreams: [
        { name: 'dlt', smsc: dlt, extra: TAGS },
        { name: 'plain', smsc: plain },
        { name: 'strict', smsc: strict, extra: 'regulatoryTlvs: { peId: 0x1400, templateId: 0x1401 }, requireRegulatory: true' },
        { name: 'slow', smsc: slow, extra: `${TAGS}, window: 1` },
        { name: 'backup', smsc: backup, extra: 'regulatoryTlvs: { peId: 0x3000, templateId: 0x3001, telemarketerId: 0x3FFF }, longMessages: sar' },
      ],
      routes: ['{ prefix: "91", upstreams: [dlt] }', '{ prefix: "44", upstreams: [plain] }', '{ prefix: "92", upstreams: [strict] }',
        '{ prefix: "93", upstreams: [slow, backup] }'],
      log: warningLog(warnings),
      // The store in the daemon's thread: a worker's start costs seconds here, and the TLVs' crossing
      // of the worker boundary is held by worker-store.test.ts.
      store: '{ path: smppd.db, thread: main }',
    });
    await Promise.all(['dlt', 'plain', 'strict', 'slow', 'backup'].map((u) => r.untilAvailable(u)));
  }, 30_000);

  const sendSms = (destinationNumber: string, fields: object) =>
    r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber, message: LONG, messageType: 'TEXT', ...fields });

  it('every part of a long sendSms carries the three ids, each a C-Octet String in its tag', async () => {
    const res = await sendSms('919800000001', IDS);
    expect(res.status).toBe(200);
    expect(await untilAllFinal(r, [await res.text()])).toEqual(['DELIVERED']);
    const parts = dlt.received().filter((s) => s.destinationAddr === '919800000001');
    expect(parts).toHaveLength(3);
    for (const p of parts) expect(vendorTlvs(p)).toEqual(inTags(0x1400, 0x1401, 0x1402));
  });

  it('every message of a sendbulk carries the ids of its bulkRequest', async () => {
    const form = bulkForm({ senderId: 'Routing', message: 'bulk', messageType: 'TEXT', ...IDS }, '919800000101\n919800000102\n');
    const res = await fetch(`http://127.0.0.1:${r.d.http.port}/sms/sendbulk`, {
      method: 'POST', headers: { ...form.headers, authorization: `Bearer ${TOKENS.app}` }, body: form.payload,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const received = () => dlt.received().filter((s) => s.destinationAddr.startsWith('9198000001'));
    await until(() => received().length === 2, 10_000, 'both bulk messages at the SMSC');
    for (const p of received()) expect(vendorTlvs(p)).toEqual(inTags(0x1400, 0x1401, 0x1402));
  });

  it('an upstream without the mapping gets none, and the log names it and the fields once, never the ids', async () => {
    const sent = [await sendSms('447700000001', IDS), await sendSms('447700000002', { peId: IDS.peId })];
    expect(sent.map((s) => s.status)).toEqual([200, 200]);
    expect(await untilAllFinal(r, await Promise.all(sent.map((s) => s.text())))).toEqual(['DELIVERED', 'DELIVERED']);
    const parts = plain.received();
    expect(parts).toHaveLength(6);
    expect(parts.every((p) => p.tlvs?.other === undefined)).toBe(true);
    const said = warnings.filter((w) => w['event'] === 'regulatory_fields_not_sent');
    expect(said).toEqual([{ event: 'regulatory_fields_not_sent', upstream: 'plain', fields: ['peId', 'templateId', 'telemarketerId'] }]);
    expect(JSON.stringify(warnings)).not.toContain(IDS.peId);
  });

  it('requireRegulatory refuses a sendSms or sendbulk without a mapped field: 400 VALIDATION naming it, nothing sent', async () => {
    const res = await sendSms('929800000001', { peId: IDS.peId, telemarketerId: IDS.telemarketerId });
    const body = await res.json() as Record<string, unknown>;
    expect(res.status).toBe(400);
    expect(Object.keys(body)).toEqual(ERROR_FIELDS);
    expect(body).toMatchObject({ status: 400, errorCode: 'VALIDATION', requestUri: '/sms/sendSms' });
    expect(body['message']).toBe('templateId: is required by the upstream this destination is sent through');
    const form = bulkForm({ senderId: 'Routing', message: 'bulk', messageType: 'TEXT', peId: IDS.peId }, '929800000101\n');
    const bulk = await fetch(`http://127.0.0.1:${r.d.http.port}/sms/sendbulk`, {
      method: 'POST', headers: { ...form.headers, authorization: `Bearer ${TOKENS.app}` }, body: form.payload,
    });
    expect([bulk.status, await bulk.json()]).toEqual([400, expect.objectContaining({ errorCode: 'VALIDATION', message: expect.stringContaining('templateId: is required') }) as unknown]);
    const ok = await sendSms('929800000002', { peId: IDS.peId, templateId: IDS.templateId });
    expect(await untilAllFinal(r, [await ok.text()])).toEqual(['DELIVERED']);
    expect(strict.destinations().every((d) => d === '929800000002')).toBe(true);
  });

  it('a queued message that fails over is sent in the new upstream\'s tags', async () => {
    const blocker = await r.send('939800000001', 'first');
    await until(() => slow.received().length === 1, 10_000, 'the first message holding slow\'s window');
    const res = await sendSms('939800000002', IDS);
    const id = await res.text();
    await until(async () => (await r.d.queue()).queued === 0, 10_000, 'the message claimed for slow');
    await slow.stop();
    expect(await untilAllFinal(r, [blocker, id])).toEqual(['DELIVERED', 'DELIVERED']);
    expect(slow.destinations()).toEqual(['939800000001']);
    const parts = backup.received().filter((s) => s.destinationAddr === '939800000002');
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(vendorTlvs(p)).toEqual(inTags(0x3000, 0x3001, 0x3fff));
  }, 30_000);
});

describePg('regulatory ids on a PostgreSQL store', () => {
  it('a long sendSms handed to the pool from its accept (no claim) carries the ids on every part, and they are stored', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const dltPg = await smsc(cleanups);
    const r = await routingDaemon(cleanups, {
      upstreams: [{ name: 'dlt', smsc: dltPg, extra: TAGS }],
      store: `{ kind: postgres, url: "${PG_URL}", schema: ${schema.name}, instanceId: regulatory }`,
    });
    await r.untilAvailable('dlt');
    // A send before the dispatcher's first claim is queued; the next, into an empty queue, goes direct.
    expect(await untilAllFinal(r, [await r.send('919800000008', 'warm-up')])).toEqual(['DELIVERED']);
    const direct = await r.counter('smppd_dispatched_total', { via: 'accept' });
    const res = await r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber: '919800000009', message: LONG, messageType: 'TEXT', ...IDS });
    const id = await res.text();
    expect(await untilAllFinal(r, [id])).toEqual(['DELIVERED']);
    expect(await r.counter('smppd_dispatched_total', { via: 'accept' })).toBe(direct + 1);
    const parts = dltPg.received().filter((p) => p.destinationAddr === '919800000009');
    expect(parts).toHaveLength(3);
    for (const p of parts) expect(vendorTlvs(p)).toEqual(inTags(0x1400, 0x1401, 0x1402));
    expect(await schema.sql('SELECT pe_id, template_id, telemarketer_id FROM messages WHERE id = $1', [id]))
      .toEqual([{ pe_id: IDS.peId, template_id: IDS.templateId, telemarketer_id: IDS.telemarketerId }]);
  }, 30_000);
});
