import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/errors.js';
import { scheduleFrom } from '../../../src/api/schedule-time.js';
import { bulkRequestSchema, parseInput, sendSmsSchema } from '../../../src/api/validation.js';

const NOW = Date.UTC(2026, 2, 1);
const base = { senderId: 'MyBrand', destinationNumber: '447700900123', message: 'Hi', messageType: 'TEXT', isSchedule: true, time: '2026-03-28 09:00', gmt: 'Europe/London' };

/** The schedule a sendSms body asks for, as the ingresses read it. */
function scheduleOf(body: Record<string, unknown>) {
  const parsed = parseInput(sendSmsSchema, body);
  return scheduleFrom({ flag: parsed.isSchedule, time: parsed.time, gmt: parsed.gmt, repeat: parsed.repeat }, 'isSchedule', '', NOW);
}

function refusal(body: Record<string, unknown>): string {
  try {
    scheduleOf(body);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).code).toBe('VALIDATION');
    return (e as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('repeat on a scheduled send', () => {
  it('takes DAILY, WEEKLY or MONTHLY in any case: a series in gmt with no end', () => {
    expect(scheduleOf({ ...base, repeat: 'weekly' })).toEqual({
      runAt: Date.UTC(2026, 2, 28, 9), repeat: 'WEEKLY', recurrence: { every: 'WEEKLY', count: null, until: null, zone: 'Europe/London' },
    });
    expect(scheduleOf({ ...base, gmt: undefined, repeat: 'Daily' })?.recurrence).toEqual({ every: 'DAILY', count: null, until: null, zone: '+00:00' });
  });

  it('takes {every, count, until}: until is a local time in gmt, after the first run', () => {
    const s = scheduleOf({ ...base, repeat: { every: 'monthly', count: 6, until: '2026-08-31 09:00' } });
    // 09:00 BST on 31 August is 08:00Z.
    expect(s?.recurrence).toEqual({ every: 'MONTHLY', count: 6, until: Date.UTC(2026, 7, 31, 8), zone: 'Europe/London' });
    expect(JSON.parse(s!.repeat!)).toEqual({ every: 'MONTHLY', count: 6, until: '2026-08-31 09:00' });
    expect(scheduleOf({ ...base, repeat: { every: 'DAILY', count: null } })?.recurrence).toMatchObject({ count: null, until: null });
  });

  it('null, "" and false are no repeat', () => {
    for (const repeat of [null, '', false]) expect(scheduleOf({ ...base, repeat })).toEqual({ runAt: Date.UTC(2026, 2, 28, 9), repeat: null });
  });

  it('refuses anything else, naming repeat and the forms it takes', () => {
    for (const repeat of ['yearly', 'DAILY;count=3', 3, true, [], {}]) {
      expect(refusal({ ...base, repeat }), JSON.stringify(repeat)).toMatch(/^repeat: must be DAILY, WEEKLY, MONTHLY \(any case\), or an object \{"every"/);
    }
    expect(refusal({ ...base, repeat: { every: 'hourly' } })).toBe('repeat.every: must be DAILY, WEEKLY, MONTHLY (any case)');
    for (const count of [0, 1001, 1.5]) expect(refusal({ ...base, repeat: { every: 'DAILY', count } })).toBe('repeat.count: must be a whole number from 1 to 1000');
    expect(refusal({ ...base, repeat: { every: 'DAILY', times: 3 } })).toBe('repeat.times: unknown field');
  });

  it('refuses an until that is malformed or not after the first run', () => {
    expect(refusal({ ...base, repeat: { every: 'DAILY', until: '2026-03-28 09:00' } })).toBe('repeat.until: must be after the first run (time)');
    expect(refusal({ ...base, repeat: { every: 'DAILY', until: 'next year' } })).toMatch(/^repeat\.until: must be a local date-time/);
  });

  it('needs a schedule: repeat without isSchedule is refused, not sent once', () => {
    expect(refusal({ ...base, isSchedule: undefined, time: undefined, repeat: 'DAILY' })).toBe('repeat: needs isSchedule true and a time (the first run)');
    expect(refusal({ ...base, time: undefined, repeat: 'DAILY' })).toBe('time: is required when isSchedule is true');
  });

  it('names bulkRequest.repeat in a sendbulk', () => {
    const bulk = { senderId: 'MyBrand', message: 'Hi', messageType: 'TEXT', schedule: true, time: '2026-03-28 09:00', repeat: 'often' };
    expect(() => parseInput(bulkRequestSchema, bulk, 'bulkRequest.')).toThrow(/^bulkRequest\.repeat: must be DAILY/);
    const parsed = parseInput(bulkRequestSchema, { ...bulk, schedule: false, time: undefined, repeat: 'daily' }, 'bulkRequest.');
    expect(() => scheduleFrom({ flag: parsed.schedule, time: parsed.time, gmt: parsed.gmt, repeat: parsed.repeat }, 'schedule', 'bulkRequest.', NOW))
      .toThrow('bulkRequest.repeat: needs bulkRequest.schedule true and a time (the first run)');
  });
});
