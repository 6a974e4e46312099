/**
 * The `repeat` field of a scheduled send (messaging-service-api.md §4.1 leaves its type open;
 * this is smppd's): `"DAILY"`, `"WEEKLY"` or `"MONTHLY"` (any case), repeating until the
 * schedule is aborted, or `{ every, count?, until? }`, which ends after `count` runs in all (the
 * first included) or with the last run at or before `until` (a local time in `gmt`), whichever
 * comes first. null, "" and false are no repeat. The runs' times: `../core/recurrence.ts`.
 */
import { z } from 'zod';
import { MAX_REPEAT_COUNT, REPEAT_EVERY, repeatEvery, type Recurrence } from '../core/recurrence.js';
import { ApiError } from './errors.js';

export const REPEAT_RULE = `${REPEAT_EVERY.join(', ')} (any case), or an object {"every": one of those, "count": runs in all from 1 to ${MAX_REPEAT_COUNT}, `
  + '"until": a local time \'YYYY-MM-DD HH:mm[:ss]\' in gmt}; null, "" or false for none';

const every = z.string({ error: (i) => (i.input === undefined ? 'is required' : 'must be a string') })
  .refine((t) => repeatEvery(t) !== null, { error: `must be ${REPEAT_EVERY.join(', ')} (any case)` })
  .meta({ description: 'How often the schedule runs again: the local time of its first run, every day, week or month.' });
const COUNT_RULE = `must be a whole number from 1 to ${MAX_REPEAT_COUNT}`;
// A refine, not int(): zod reports int() as a wrong type, and a union then names none of its options.
const count = z.number({ error: 'must be a number' }).min(1, { error: COUNT_RULE }).max(MAX_REPEAT_COUNT, { error: COUNT_RULE })
  .refine(Number.isInteger, { error: COUNT_RULE })
  .nullish().meta({ description: `Runs in all, the first included (1–${MAX_REPEAT_COUNT}).` });
const until = z.string({ error: 'must be a string' }).max(32, { error: 'must be at most 32 characters' }).nullish()
  .meta({ description: "No run after this local date-time 'YYYY-MM-DD HH:mm[:ss]' in gmt; after the first run." });

/** The zod schema of `repeat` (sendSms and bulkRequest). */
export const repeatSchema = z.union([
  z.string().refine((t) => t === '' || repeatEvery(t) !== null, { error: `must be ${REPEAT_RULE}` }),
  z.strictObject({ every, count, until }),
  z.literal(false),
], { error: `must be ${REPEAT_RULE}` }).nullish().meta({
  description: `Repeats a scheduled send (needs the schedule flag and time): ${REPEAT_RULE}. The series keeps the local time of the first run in gmt `
    + '(daylight-saving changes included; a monthly one on the 29th–31st runs on the last day of shorter months); each run is a new batch; '
    + '/sms/abort/schedule ends it.',
  examples: ['DAILY', { every: 'WEEKLY', count: 4 }, { every: 'MONTHLY', until: '2027-06-30 23:59' }],
});
export type RepeatInput = z.output<typeof repeatSchema>;

/** Whether `repeat` asks for a series at all. */
export function asksToRepeat(repeat: RepeatInput): boolean {
  return repeat !== undefined && repeat !== null && repeat !== false && repeat !== '';
}

/** A schedule's repeat as the store keeps it: the text it lists, and the series. */
export interface ScheduleRepeat {
  repeat: string | null;
  recurrence?: Recurrence;
}

/**
 * The series `repeat` asks for, with its first run at `firstRun` in `gmt`. `parseTime` reads
 * `until` as the schedule's `time` is read (`parseScheduleTime`, passed in: that module calls this one). Throws VALIDATION naming the field (`prefix`:
 * 'bulkRequest.' or '') when `until` is malformed or not after the first run.
 */
export function seriesFrom(
  repeat: RepeatInput, firstRun: number, gmt: string | undefined, prefix: string,
  parseTime: (time: string, gmt: string | undefined) => { ok: true; at: number } | { ok: false },
): ScheduleRepeat {
  if (!asksToRepeat(repeat)) return { repeat: null };
  const zone = gmt === undefined || gmt === '' ? '+00:00' : gmt;
  if (typeof repeat === 'string') {
    const word = repeatEvery(repeat)!;
    return { repeat: word, recurrence: { every: word, count: null, until: null, zone } };
  }
  const r = repeat as Exclude<RepeatInput, string | false | null | undefined>;
  const word = repeatEvery(r.every)!;
  let untilAt: number | null = null;
  if (r.until != null && r.until !== '') {
    const parsed = parseTime(r.until, gmt);
    // gmt was read with time already: only until itself can be wrong here.
    if (!parsed.ok) throw new ApiError('VALIDATION', `${prefix}repeat.until: must be a local date-time 'YYYY-MM-DD HH:mm[:ss]' in gmt`);
    if (parsed.at <= firstRun) throw new ApiError('VALIDATION', `${prefix}repeat.until: must be after the first run (time)`);
    untilAt = parsed.at;
  }
  const recurrence: Recurrence = { every: word, count: r.count ?? null, until: untilAt, zone };
  const text = JSON.stringify({ every: word, count: recurrence.count, until: untilAt === null ? null : r.until!.trim() });
  return { repeat: text, recurrence };
}
