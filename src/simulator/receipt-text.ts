/**
 * The delivery receipt the simulator writes: the de-facto text format of SMPP v3.4 Appendix B
 * and the message_state values of §5.2.28. Pure.
 */

/** The stat words of Appendix B, and the message_state TLV value each one goes with. */
export const RECEIPT_STATS = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7,
  REJECTD: 8,
} as const;
export type ReceiptStat = keyof typeof RECEIPT_STATS;

export function isReceiptStat(s: string): s is ReceiptStat {
  return Object.hasOwn(RECEIPT_STATS, s);
}

/**
 * The err field for each stat. The values are network-specific in real SMSCs; these are
 * arbitrary but stable, and non-zero exactly for the outcomes that are failures.
 */
const ERR_FOR_STAT: Record<ReceiptStat, number> = {
  ENROUTE: 0,
  DELIVRD: 0,
  ACCEPTD: 0,
  EXPIRED: 1,
  DELETED: 2,
  UNDELIV: 3,
  UNKNOWN: 4,
  REJECTD: 5,
};

/** Whether registered_delivery's receipt bits ask for a receipt of this outcome (SMPP v3.4 §5.2.17). */
export function receiptWanted(registeredDelivery: number, stat: ReceiptStat): boolean {
  switch (registeredDelivery & 0x03) {
    case 1:
      return true; // on success or failure
    case 2:
      return ERR_FOR_STAT[stat] !== 0; // on failure only
    default:
      return false; // 0: none; 3: reserved
  }
}

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

// Every receipt writes two dates, nearly always of the current minute: the last one is kept.
let lastMinute = NaN;
let lastDate = '';

/** YYMMDDhhmm in UTC, the date format of the receipt text. */
export function receiptDate(wallMs: number): string {
  const minute = Math.floor(wallMs / 60_000);
  if (minute !== lastMinute) {
    const d = new Date(minute * 60_000);
    lastDate = two(d.getUTCFullYear() % 100) + two(d.getUTCMonth() + 1) + two(d.getUTCDate()) + two(d.getUTCHours()) + two(d.getUTCMinutes());
    lastMinute = minute;
  }
  return lastDate;
}

export interface ReceiptTextFields {
  /** The message id as the receipt writes it. */
  id: string;
  stat: ReceiptStat;
  /** Wall-clock milliseconds. */
  submitDate: number;
  doneDate: number;
  /** The start of the original message (at most 20 characters are written). */
  text: string;
}

/** `id:… sub:001 dlvrd:001 submit date:… done date:… stat:DELIVRD err:000 text:…` */
export function formatReceiptText(f: ReceiptTextFields): string {
  const dlvrd = f.stat === 'DELIVRD' ? '001' : '000';
  const err = String(ERR_FOR_STAT[f.stat]).padStart(3, '0');
  return `id:${f.id} sub:001 dlvrd:${dlvrd} submit date:${receiptDate(f.submitDate)} done date:${receiptDate(f.doneDate)} stat:${f.stat} err:${err} text:${f.text.slice(0, 20)}`;
}

/**
 * The first 20 octets of a short message as Latin-1, after the user data header when esm_class
 * says there is one (SMPP v3.4 §5.2.12, GSM 03.40 UDHI).
 */
export function receiptExcerpt(shortMessage: Buffer, esmClass: number): string {
  let start = 0;
  if ((esmClass & 0x40) !== 0 && shortMessage.length > 0) start = Math.min(shortMessage.length, shortMessage[0]! + 1);
  return shortMessage.toString('latin1', start, Math.min(shortMessage.length, start + 20));
}
