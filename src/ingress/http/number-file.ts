/**
 * sendbulk's number file (messaging-service-api.md §2.3): its lines read as they arrive and
 * counted by the number rule (api/numbers.ts), each refused line by the rule it breaks.
 */
import type { z } from 'zod';
import { checkNumber, type NumberProblem } from '../../api/numbers.js';
import type { bulkListInfoSchema } from '../../api/responses.js';

/** §2.3 `bulkListInfo`. total = validCount + invalidCount + duplicate. */
export type BulkListInfo = z.output<typeof bulkListInfoSchema>;

const SEPARATOR = /[,;\t]/;
const HAS_DIGIT = /\d/;

/**
 * Reads the lines of a number file (CSV: the first column; TXT: the line) and counts them.
 * A first line without any digit is a header and is skipped; blank lines are skipped. Repeats
 * are found later, over the whole file (`DestinationList`).
 */
export class NumberTally {
  #headerPossible = true;
  #total = 0;
  readonly #errors: Partial<Record<NumberProblem, number>> = {};
  #invalid = 0;

  /** The valid number on this line, or null (blank, header, invalid). */
  line(raw: string): string | null {
    const n = firstColumn(raw);
    if (n === '') return null;
    if (this.#headerPossible) {
      this.#headerPossible = false;
      if (!HAS_DIGIT.test(n)) return null;
    }
    this.#total++;
    const problem = checkNumber(n);
    if (problem !== null) {
      this.#invalid++;
      this.#errors[problem] = (this.#errors[problem] ?? 0) + 1;
      return null;
    }
    return n;
  }

  /** The counts, with how many numbers are sent and how many were left out as repeats. */
  info(sent: { count: number; repeats: number }): BulkListInfo {
    return { total: this.#total, validCount: sent.count, invalidCount: this.#invalid, duplicate: sent.repeats, errors: { ...this.#errors } };
  }
}

/** The first column of a CSV line, unquoted and trimmed; a TXT line is one column. */
function firstColumn(line: string): string {
  let s = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line; // a UTF-8 BOM before the first line
  const sep = s.search(SEPARATOR);
  if (sep !== -1) s = s.slice(0, sep);
  s = s.trim();
  if (s.length >= 2 && s.startsWith('"') && s.endsWith('"')) s = s.slice(1, -1).trim();
  return s;
}

/** Longest line kept; the rest of a longer one is dropped (it cannot be a number anyway). */
const MAX_LINE = 1024;

/**
 * The lines of a byte stream, as they arrive: memory holds one chunk and one partial line,
 * never the file. '\n' or '\r\n' ends a line; a last line without one counts too.
 */
export async function* readLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let overlong = false;
  for await (const chunk of stream) {
    const text = pending + (typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 0x0d ? nl - 1 : nl;
      yield overlong ? text.slice(start, Math.min(end, start + MAX_LINE)) + '…' : text.slice(start, end);
      overlong = false;
      start = nl + 1;
    }
    pending = text.slice(start);
    if (pending.length > MAX_LINE) {
      pending = pending.slice(0, MAX_LINE);
      overlong = true;
    }
  }
  pending += decoder.decode();
  if (pending.endsWith('\r')) pending = pending.slice(0, -1);
  if (pending !== '' || overlong) yield overlong ? `${pending}…` : pending;
}
