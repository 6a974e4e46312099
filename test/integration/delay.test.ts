/**
 * `delay` end to end (messaging-service-api.md §4.1, §8): the daemon as `smppd start` builds it,
 * an SMSC simulator over a real socket, and when each submit_sm reaches it. On sendSms a delay
 * makes the message a schedule of one (listed, sent now or aborted); on sendbulk it spaces that
 * batch's messages without slowing anyone else's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cleanups } from '../support/daemon-child.js';
import { until } from '../support/engine.js';
import { bulkForm } from '../support/http.js';
import { TOKENS, routingDaemon, smsc, type RoutingDaemon, type Smsc } from './routing/rig.js';

// One daemon and SMSC for the file: each test sends to numbers of its own.
const cleanups: Cleanups = [];
let r: RoutingDaemon;
let at: Map<string, number>;
beforeAll(async () => {
  const s = await smsc(cleanups);
  r = await routingDaemon(cleanups, { upstreams: [{ name: 'sim', smsc: s }] });
  await r.untilAvailable('sim');
  at = arrivals(s);
});
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** When each destination reached the SMSC (ms, this process's clock), polled every couple of ms. */
function arrivals(s: Smsc): Map<string, number> {
  const seen = new Map<string, number>();
  const timer = setInterval(() => {
    const now = Date.now();
    for (const d of s.destinations()) if (!seen.has(d)) seen.set(d, now);
  }, 2);
  cleanups.push(() => clearInterval(timer));
  return seen;
}

const call = (method: string, path: string) => fetch(`http://127.0.0.1:${r.d.http.port}${path}`, {
  method, headers: { authorization: `Bearer ${TOKENS.app}` },
});

type ScheduleEntry = { id: number; batchId: number; state: string; time: string; lastRun: string | null };
async function schedules(): Promise<ScheduleEntry[]> {
  return await (await call('GET', '/sms/listSchedule')).json() as ScheduleEntry[];
}

describe('sendSms delay', () => {
  it('holds the message as a schedule of one until its time, then sends it', async () => {
    const before = Date.now();
    const res = await r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber: '447700900001', message: 'later', messageType: 'TEXT', delay: 1.2 });
    expect(res.status, await res.clone().text()).toBe(200);
    const [listed] = await schedules();
    expect(listed).toMatchObject({ state: 'scheduled', lastRun: null });
    expect(Date.parse(listed!.time) - before).toBeGreaterThanOrEqual(1_200);
    await until(() => at.has('447700900001'), 10_000, 'the delayed message at the SMSC');
    expect(at.get('447700900001')! - before).toBeGreaterThanOrEqual(1_200);
    const [released] = await schedules();
    expect(released).toMatchObject({ state: 'released', lastRun: expect.any(String) });
  });

  it('can be sent now, or aborted: its batch is then aborted and its message FAILED', async () => {
    const send = async (n: string) => {
      const res = await r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber: n, message: 'later', messageType: 'TEXT', delay: 600 });
      return { id: await res.text(), schedule: (await schedules())[0]! };
    };
    const now = await send('447700900002');
    const sent = await call('POST', `/sms/send-now?scheduleId=${now.schedule.id}`);
    expect(await sent.json()).toMatchObject({ id: now.schedule.id, state: 'released', lastRun: expect.any(String) });
    await until(() => at.has('447700900002'), 10_000, 'the released message at the SMSC');

    const aborted = await send('447700900003');
    expect(await (await call('DELETE', `/sms/abort/schedule?scheduleId=${aborted.schedule.id}`)).json()).toMatchObject({ state: 'cancelled', lastRun: null });
    const batch = await (await call('GET', `/sms/edit?batch_Id=${aborted.schedule.batchId}`)).json();
    expect(batch).toMatchObject({ state: 'aborted', active: false });
    expect(await r.status(aborted.id)).toBe('FAILED');
    expect(at.has('447700900003')).toBe(false);
  });

  it('refuses a delay out of bounds, naming the field', async () => {
    for (const delay of [-1, 604_801, 'soon']) {
      const res = await r.post('/sms/sendSms', { senderId: 'Routing', destinationNumber: '447700900004', message: 'x', messageType: 'TEXT', delay });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ errorCode: 'VALIDATION', message: expect.stringMatching(/^delay: must be a number/) });
    }
  });
});

describe('sendbulk delay', () => {
  const bulk = (numbers: string[], delay: unknown) => {
    const form = bulkForm({ senderId: 'Routing', message: 'spaced', messageType: 'TEXT', delay }, numbers.join('\n'));
    return fetch(`http://127.0.0.1:${r.d.http.port}/sms/sendbulk`, {
      method: 'POST', headers: { ...form.headers, authorization: `Bearer ${TOKENS.app}` }, body: form.payload,
    });
  };

  it('spaces that batch’s messages, and a single send meanwhile is not slowed', async () => {
    const numbers = ['447700900011', '447700900012', '447700900013', '447700900014'];
    const res = await bulk(numbers, 0.4);
    expect(res.status, await res.clone().text()).toBe(200);
    await r.send('447700900099');
    await until(() => numbers.every((n) => at.has(n)), 15_000, 'every spaced message at the SMSC');
    const times = numbers.map((n) => at.get(n)!);
    // The turns are 0.4 s apart as the binds take them; the poll that stamps arrivals adds a few ms.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!, `gap before message ${i + 1}`).toBeGreaterThanOrEqual(380);
    expect(at.get('447700900099')!).toBeLessThan(times[1]!);
  });

  it('refuses a delay out of bounds, naming the field', async () => {
    const res = await bulk(['447700900021'], 3_601);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ errorCode: 'VALIDATION', message: expect.stringContaining('bulkRequest.delay: must be a number of seconds from 0 to 3600') });
  });
});
