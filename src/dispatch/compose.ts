/**
 * A message to the submit_sm parts of one upstream: the domain encodes and splits the text by
 * the upstream's settings; this adds what the wire needs around it (addresses, receipt request,
 * validity, the rotating concatenation reference). One composer per upstream: the reference
 * rotates per upstream so that two long messages in flight never share one.
 */
import { randomInt } from 'node:crypto';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { SubmitPart } from '../smpp/upstream-pool.js';
import type { Tlvs } from '../smpp/pdu.js';
import { encodeMessage, type EncodeError, type Encoding, type LongMessageMode, type MessageType } from '../sms/segment.js';
import { validityPeriod } from '../sms/smpp-time.js';
import type { DefaultAlphabet } from '../sms/text-codec.js';

/** The per-upstream keys of the configuration that shape the wire form. */
export interface ComposeSettings {
  defaultAlphabet: DefaultAlphabet;
  nationalLanguageShift: boolean;
  longMessages: LongMessageMode;
  udhReference: 8 | 16;
  maxParts: number;
  requestReceipts: boolean;
}

export interface OutgoingMessage {
  /** The sender id: alphanumeric, a short code or a number with country code. */
  source: string;
  /** Digits with country code, no '+' (the ingress validates it). */
  destination: string;
  text: string;
  /** TEXT refuses characters outside GSM 03.38; UNICODE always sends UCS-2; AUTO picks. Default AUTO. */
  messageType?: MessageType;
  /** Hours the SMSC may keep trying (the API's expiryHour); none: the SMSC's default. */
  validityHours?: number;
}

export interface ComposedMessage {
  encoding: Encoding;
  parts: SubmitPart[];
}

/** SMPP v3.4 §5.2.5–6: type of number and numbering plan. */
const TON = { UNKNOWN: 0, INTERNATIONAL: 1, NETWORK_SPECIFIC: 3, ALPHANUMERIC: 5 } as const;
const NPI = { UNKNOWN: 0, E164: 1 } as const;
/** Longest numeric sender treated as a short code rather than a full number. */
const SHORT_CODE_MAX_DIGITS = 8;
/** SMPP v3.4 §5.2.17: registered_delivery bit 0: a receipt on final outcome, success or failure. */
const RECEIPT_ON_FINAL = 0x01;

/**
 * TON/NPI of a sender id as most SMSCs expect them: letters → alphanumeric (5/0); a short code
 * → network specific (3/0); a longer number → international E.164 (1/1).
 */
export function sourceAddress(source: string): { ton: number; npi: number } {
  if (!/^\d+$/.test(source)) return { ton: TON.ALPHANUMERIC, npi: NPI.UNKNOWN };
  if (source.length <= SHORT_CODE_MAX_DIGITS) return { ton: TON.NETWORK_SPECIFIC, npi: NPI.UNKNOWN };
  return { ton: TON.INTERNATIONAL, npi: NPI.E164 };
}

/** The fields of a submit_sm that are the same for every part of a message. */
export interface SubmitAddressing {
  source: string;
  sourceTon: number;
  sourceNpi: number;
  destination: string;
  destTon: number;
  destNpi: number;
  registeredDelivery: number;
  /** SMPP validity_period; '' for the SMSC's default. */
  validityPeriod: string;
}

/** One part's body: what the domain encodes and the store keeps. */
export interface PartBody {
  dataCoding: number;
  esmClass: number;
  shortMessage: Buffer;
  sar?: { refNum: number; total: number; seq: number };
  messagePayload?: Buffer;
}

/** The submit_sm of one part, every field explicit (the codec's own defaults are never used). */
export function buildSubmitSm(a: SubmitAddressing, body: PartBody): SubmitPart {
  const tlvs: Tlvs = {};
  if (body.sar) {
    tlvs.sarMsgRefNum = body.sar.refNum;
    tlvs.sarTotalSegments = body.sar.total;
    tlvs.sarSegmentSeqnum = body.sar.seq;
  }
  if (body.messagePayload) tlvs.messagePayload = body.messagePayload;
  return {
    command: 'submit_sm',
    commandStatus: 0,
    serviceType: '',
    sourceAddrTon: a.sourceTon,
    sourceAddrNpi: a.sourceNpi,
    sourceAddr: a.source,
    destAddrTon: a.destTon,
    destAddrNpi: a.destNpi,
    destinationAddr: a.destination,
    esmClass: body.esmClass,
    protocolId: 0,
    priorityFlag: 0,
    scheduleDeliveryTime: '',
    validityPeriod: a.validityPeriod,
    registeredDelivery: a.registeredDelivery,
    replaceIfPresentFlag: 0,
    dataCoding: body.dataCoding,
    smDefaultMsgId: 0,
    shortMessage: body.shortMessage,
    ...(Object.keys(tlvs).length > 0 ? { tlvs } : {}),
  };
}

const ERROR_CODES: Readonly<Record<EncodeError['code'], ErrorCode>> = {
  NOT_GSM7: ErrorCode.TEXT_NOT_GSM7,
  TOO_MANY_PARTS: ErrorCode.MESSAGE_TOO_LONG,
  NOT_REPRESENTABLE: ErrorCode.TEXT_NOT_REPRESENTABLE,
};

export class MessageComposer {
  readonly #settings: ComposeSettings;
  #reference: number;

  /** `firstReference`: where the rotation starts; random by default, so a restart does not reuse recent ones. */
  constructor(settings: ComposeSettings, firstReference = randomInt(0, 0x10000)) {
    this.#settings = settings;
    this.#reference = firstReference;
  }

  /** The parts to submit, in order; throws SmppdError (TEXT_NOT_GSM7, MESSAGE_TOO_LONG, TEXT_NOT_REPRESENTABLE). */
  compose(message: OutgoingMessage): ComposedMessage {
    const s = this.#settings;
    const encoded = encodeMessage(message.text, {
      messageType: message.messageType ?? 'AUTO',
      defaultAlphabet: s.defaultAlphabet,
      nationalShift: s.nationalLanguageShift,
      longMessages: s.longMessages,
      udhReferenceBits: s.udhReference,
      maxParts: s.maxParts,
      reference: this.#reference,
    });
    if (!encoded.ok) {
      const { code, message: why, ...details } = encoded.error;
      throw new SmppdError(ERROR_CODES[code], why, details);
    }
    // Only a message of several parts uses a reference; single parts leave the rotation alone.
    if (encoded.parts.length > 1) this.#reference = (this.#reference + 1) & 0xffff;
    const source = sourceAddress(message.source);
    const validity = message.validityHours === undefined ? '' : validityPeriod(message.validityHours);
    const addressing: SubmitAddressing = {
      source: message.source, sourceTon: source.ton, sourceNpi: source.npi,
      destination: message.destination, destTon: TON.INTERNATIONAL, destNpi: NPI.E164,
      registeredDelivery: s.requestReceipts ? RECEIPT_ON_FINAL : 0,
      validityPeriod: validity,
    };
    const parts = encoded.parts.map((p) => buildSubmitSm(addressing, p));
    return { encoding: encoded.encoding, parts };
  }
}
