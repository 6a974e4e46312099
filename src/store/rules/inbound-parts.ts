/**
 * The parts of concatenated MO messages as both stores keep them, decided once: a table of parts
 * waiting for the rest of their message (`inbound_parts`), and a digest per part of each message
 * lately stored (`inbound_assembled`), by which a part an SMSC delivers again is told from the
 * first part of a new message that reuses the reference. Each store's own I/O reads and writes
 * the rows; what they mean is here.
 */
import { createHash } from 'node:crypto';
import { assembleMo, type ConcatScheme, type MoPiece } from '../../sms/inbound.js';
import type { DefaultAlphabet } from '../../sms/text-codec.js';
import type { ExpiredInbound, InboundPartRecord, InboundRecord } from '../inbound.js';

/** The columns that name a message's parts, in the tables' key order. */
export interface InboundKey {
  upstream: string;
  source: string;
  destination: string;
  scheme: ConcatScheme;
  ref: number;
  total: number;
}

/** A row of inbound_parts (0/1 flags, times in milliseconds). */
export interface InboundPartRow extends InboundKey {
  seq: number;
  data_coding: number;
  body: Buffer;
  locking_shift: number | null;
  single_shift: number | null;
  udh_invalid: 0 | 1;
  default_alphabet: DefaultAlphabet;
  client: string | null;
  events: 0 | 1;
  received_at: number;
}

export function keyOf(k: InboundKey): InboundKey {
  return { upstream: k.upstream, source: k.source, destination: k.destination, scheme: k.scheme, ref: k.ref, total: k.total };
}

/** The key's columns, in the tables' key order (a SELECT list, a GROUP BY). */
export const KEY_COLUMNS = 'upstream, source, destination, scheme, ref, total';

/** The key's values, in the order of the statements' first six parameters. */
export function keyParams(k: InboundKey): unknown[] {
  return [k.upstream, k.source, k.destination, k.scheme, k.ref, k.total];
}

/**
 * The statements both stores run on the two tables, in the SQL both dialects share, with the
 * dialect's placeholder for parameter n (`?` in SQLite, `$n` in PostgreSQL), numbered in the
 * order the values are given: the key's six first (`keyParams`).
 */
export function inboundPartsSql(p: (n: number) => string) {
  const key = `upstream = ${p(1)} AND source = ${p(2)} AND destination = ${p(3)} AND scheme = ${p(4)} AND ref = ${p(5)} AND total = ${p(6)}`;
  const values = (n: number): string => Array.from({ length: n }, (_, i) => p(i + 1)).join(', ');
  return {
    /** Parameters: `partParams`. A part already held is left as it is (a repeat). */
    insertPart: `INSERT INTO inbound_parts (${PART_COLUMNS.join(', ')}) VALUES (${values(PART_COLUMNS.length)}) ON CONFLICT DO NOTHING`,
    countParts: `SELECT count(*) AS n FROM inbound_parts WHERE ${key}`,
    selectParts: `SELECT * FROM inbound_parts WHERE ${key} ORDER BY seq`,
    deleteParts: `DELETE FROM inbound_parts WHERE ${key}`,
    selectAssembled: `SELECT digests FROM inbound_assembled WHERE ${key}`,
    deleteAssembled: `DELETE FROM inbound_assembled WHERE ${key}`,
    /** Parameters: the key, the digests (`digestsOf`), the time. */
    remember: `INSERT INTO inbound_assembled (${KEY_COLUMNS}, digests, assembled_at) VALUES (${values(8)})
      ON CONFLICT (${KEY_COLUMNS}) DO UPDATE SET digests = excluded.digests, assembled_at = excluded.assembled_at`,
    forget: `DELETE FROM inbound_assembled WHERE assembled_at < ${p(1)}`,
  };
}

const PART_COLUMNS = [
  'upstream', 'source', 'destination', 'scheme', 'ref', 'total', 'seq', 'data_coding', 'body', 'locking_shift',
  'single_shift', 'udh_invalid', 'default_alphabet', 'client', 'events', 'received_at',
] as const satisfies ReadonlyArray<keyof InboundPartRow>;

/** The values of `insertPart`. */
export function partParams(part: InboundPartRecord): unknown[] {
  const row = partRow(part);
  return PART_COLUMNS.map((c) => row[c]);
}

/** The key as one string: an advisory lock's name (PostgreSQL), a map key. */
export function keyText(k: InboundKey): string {
  return [k.upstream, k.source, k.destination, k.scheme, String(k.ref), String(k.total)].join('\u001f');
}

/** The row a part is stored as. */
function partRow(part: InboundPartRecord): InboundPartRow {
  const { piece } = part;
  return {
    ...keyOf(part),
    seq: piece.seq,
    data_coding: piece.dataCoding,
    body: piece.body,
    locking_shift: piece.shift?.locking ?? null,
    single_shift: piece.shift?.single ?? null,
    udh_invalid: piece.udhInvalid ? 1 : 0,
    default_alphabet: part.defaultAlphabet,
    client: part.client,
    events: part.events ? 1 : 0,
    received_at: part.receivedAt,
  };
}

function pieceOf(row: InboundPartRow): MoPiece {
  const locking = row.locking_shift ?? undefined;
  const single = row.single_shift ?? undefined;
  const shift = locking === undefined && single === undefined
    ? undefined
    : { ...(locking === undefined ? {} : { locking }), ...(single === undefined ? {} : { single }) };
  return { seq: row.seq, dataCoding: row.data_coding, body: row.body, udhInvalid: row.udh_invalid === 1, ...(shift ? { shift } : {}) };
}

/**
 * The message the rows of one key make, whole or not. Its route and default alphabet are those
 * of the part that arrived last; it was received when that part was.
 */
export function assembleRows(rows: readonly InboundPartRow[]): InboundRecord {
  const last = rows.reduce((a, b) => (b.received_at >= a.received_at ? b : a));
  const m = assembleMo(last.total, rows.map(pieceOf), last.default_alphabet);
  return {
    upstream: last.upstream,
    client: last.client,
    events: last.events === 1,
    source: last.source,
    destination: last.destination,
    text: m.text,
    dataCoding: m.dataCoding,
    parts: m.parts,
    missingParts: m.missing,
    problems: m.problems,
    ...(m.raw ? { raw: m.raw } : {}),
    receivedAt: last.received_at,
  };
}

/** What `expireInboundParts` says of a message it stored. */
export function expired(inboundId: number, record: InboundRecord): ExpiredInbound {
  return {
    upstream: record.upstream, inboundId, source: record.source, destination: record.destination,
    parts: record.parts, missingParts: [...(record.missingParts ?? [])],
  };
}

/** Octets of one part's digest: 128 bits of SHA-256, far past any chance of two bodies colliding. */
const DIGEST_OCTETS = 16;
const NO_PART = Buffer.alloc(DIGEST_OCTETS);

function digestOf(body: Uint8Array): Buffer {
  return createHash('sha256').update(body).digest().subarray(0, DIGEST_OCTETS);
}

/** The digests of a stored message: slot `seq - 1` for each part that arrived, zeros for one that did not. */
export function digestsOf(total: number, rows: readonly InboundPartRow[]): Buffer {
  const out = Buffer.alloc(total * DIGEST_OCTETS);
  for (const r of rows) if (r.seq >= 1 && r.seq <= total) digestOf(r.body).copy(out, (r.seq - 1) * DIGEST_OCTETS);
  return out;
}

/**
 * What a part is to the message stored lately under its key: `repeat` (that part again, the same
 * bytes), `other` (a part with other bytes where the stored message had one: a new message reusing
 * the reference, so the stored one's digests are forgotten), or `unknown` (a part the stored
 * message never got: it waits as a message of its own).
 */
export function compareWithStored(digests: Buffer, seq: number, body: Uint8Array): 'repeat' | 'other' | 'unknown' {
  const slot = digests.subarray((seq - 1) * DIGEST_OCTETS, seq * DIGEST_OCTETS);
  if (slot.length !== DIGEST_OCTETS || slot.equals(NO_PART)) return 'unknown';
  return slot.equals(digestOf(body)) ? 'repeat' : 'other';
}
