/**
 * Message ids: UUID version 7 (RFC 9562), 48 bits of Unix milliseconds then 74 random bits.
 * They look like the random UUIDs users know, but ids made later sort later, so the store's
 * indexes on them grow at their end instead of taking every insert at a random page: a store
 * of many millions of messages keeps its hot pages in cache.
 */
import { randomFillSync } from 'node:crypto';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Random bytes drawn 4 KiB at a time: one crypto call per 409 ids instead of one each. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

export function uuidV7(unixMs: number): string {
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const r = pool.subarray(poolOffset, poolOffset + 10);
  poolOffset += 10;
  const ms = Math.max(0, Math.floor(unixMs));
  const high = Math.floor(ms / 0x1_0000_0000);
  const low = ms >>> 0;
  const b = [
    (high >>> 8) & 0xff, high & 0xff, low >>> 24, (low >>> 16) & 0xff, (low >>> 8) & 0xff, low & 0xff,
    0x70 | (r[0]! & 0x0f), r[1]!, 0x80 | (r[2]! & 0x3f), r[3]!, r[4]!, r[5]!, r[6]!, r[7]!, r[8]!, r[9]!,
  ].map((x) => HEX[x]!);
  return `${b[0]}${b[1]}${b[2]}${b[3]}-${b[4]}${b[5]}-${b[6]}${b[7]}-${b[8]}${b[9]}-${b[10]}${b[11]}${b[12]}${b[13]}${b[14]}${b[15]}`;
}
