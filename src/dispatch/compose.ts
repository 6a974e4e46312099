/**
 * A message to the submit_sm parts of one upstream: the domain encodes and splits the text by
 * the upstream's settings; this adds what the wire needs around it (addresses, receipt request,
 * validity, the rotating concatenation reference, the regulatory ids in the upstream's TLVs). One
 * composer per upstream: the reference rotates per upstream so that two long messages in flight
 * never share one.
 */
import { randomInt } from 'node:crypto';
import { ErrorCode, SmppdError } from '../core/errors.js';
import type { SubmitPart } from '../smpp/part-outcome.js';
import type { StoredPartBody } from '../store/intake.js';
import type { Tlvs } from '../smpp/pdu.js';
import { REGULATORY_FIELDS, missingFields, regulatoryIdProblem, regulatoryTlvs, type RegulatoryField, type RegulatoryIds, type RegulatoryTags, type VendorTlv } from '../sms/regulatory.js';
import { encodeMessage, type EncodeError, type Encoding, type LongMessageMode, type MessageType } from '../sms/segment.js';
import { DEFAULT_SOURCE_ADDRESSING, checkSenderId, type SourceAddressing, type TonNpi } from '../sms/sender-id.js';
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
  /** source_addr_ton/npi per kind of sender ID (sms/sender-id.ts). Default `DEFAULT_SOURCE_ADDRESSING`: 5/0, 1/1, 3/0. */
  sourceAddress?: SourceAddressing;
  /** The TLV tag of each regulatory id this upstream sends (`upstreams[].regulatoryTlvs`). Default: none is sent. */
  regulatoryTlvs?: RegulatoryTags;
  /** Every field `regulatoryTlvs` maps must be given (`upstreams[].requireRegulatory`). Default false. */
  requireRegulatory?: boolean;
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
  /** The registry ids the send gave (peId, templateId, telemarketerId). */
  regulatory?: RegulatoryIds;
}

export interface ComposedMessage {
  encoding: Encoding;
  parts: SubmitPart[];
  /** What every part carries besides its body: the regulatory ids in the upstream's tags (empty: none). */
  vendorTlvs: VendorTlv[];
  /** Ids the send gave that this upstream has no tag for: not sent. */
  unsentRegulatory: RegulatoryField[];
}

/** SMPP v3.4 §5.2.5–6: destination_addr is a number with its country code (the ingress checks it). */
const TON_INTERNATIONAL = 1;
const NPI_E164 = 1;
/** SMPP v3.4 §5.2.17: registered_delivery bit 0: a receipt on final outcome, success or failure. */
const RECEIPT_ON_FINAL = 0x01;

/**
 * The TON/NPI of a sender ID by its kind (sms/sender-id.ts). Throws VALIDATION naming senderId
 * for one no network carries: the ingress refuses those first, this keeps any other caller off
 * the wire with one.
 */
export function sourceAddress(source: string, addressing: SourceAddressing = DEFAULT_SOURCE_ADDRESSING): TonNpi {
  const checked = checkSenderId(source);
  if (!checked.ok) throw new SmppdError(ErrorCode.VALIDATION, `senderId: ${checked.problem}`);
  return addressing[checked.kind];
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
  /** Vendor-specific TLVs every part carries (the regulatory ids); absent or empty: none. */
  vendorTlvs?: readonly VendorTlv[];
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
  if (a.vendorTlvs !== undefined && a.vendorTlvs.length > 0) tlvs.other = a.vendorTlvs.map((t) => ({ tag: t.tag, value: t.value }));
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

/** The parts of a composed message as the store keeps them. */
export function partBodies(composed: ComposedMessage): StoredPartBody[] {
  return composed.parts.map((p): StoredPartBody => ({
    dataCoding: p.dataCoding,
    esmClass: p.esmClass,
    shortMessage: p.shortMessage,
    ...(p.tlvs?.sarMsgRefNum !== undefined ? { sar: { refNum: p.tlvs.sarMsgRefNum, total: p.tlvs.sarTotalSegments ?? 0, seq: p.tlvs.sarSegmentSeqnum ?? 0 } } : {}),
    ...(p.tlvs?.messagePayload ? { messagePayload: p.tlvs.messagePayload } : {}),
  }));
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

  /**
   * The parts to submit, in order; throws SmppdError (VALIDATION, TEXT_NOT_GSM7, MESSAGE_TOO_LONG,
   * TEXT_NOT_REPRESENTABLE). VALIDATION names each regulatory field this upstream requires and the
   * message lacks, or sends and cannot carry.
   */
  compose(message: OutgoingMessage): ComposedMessage {
    const s = this.#settings;
    const source = sourceAddress(message.source, s.sourceAddress);
    const regulatory = this.#regulatory(message.regulatory);
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
    const validity = message.validityHours === undefined ? '' : validityPeriod(message.validityHours);
    const addressing: SubmitAddressing = {
      source: message.source, sourceTon: source.ton, sourceNpi: source.npi,
      destination: message.destination, destTon: TON_INTERNATIONAL, destNpi: NPI_E164,
      registeredDelivery: s.requestReceipts ? RECEIPT_ON_FINAL : 0,
      validityPeriod: validity,
      vendorTlvs: regulatory.tlvs,
    };
    const parts = encoded.parts.map((p) => buildSubmitSm(addressing, p));
    return { encoding: encoded.encoding, parts, vendorTlvs: regulatory.tlvs, unsentRegulatory: regulatory.unsent };
  }

  /** The ids as this upstream sends them; throws VALIDATION naming each field it requires and lacks, or cannot carry. */
  #regulatory(ids: RegulatoryIds | undefined): ReturnType<typeof regulatoryTlvs> {
    const tags = this.#settings.regulatoryTlvs;
    const problems = this.#settings.requireRegulatory === true
      ? missingFields(ids, tags).map((f) => `${f}: is required by the upstream this destination is sent through`)
      : [];
    for (const field of REGULATORY_FIELDS) {
      const id = ids?.[field];
      const problem = id === undefined || tags?.[field] === undefined ? null : regulatoryIdProblem(id);
      if (problem !== null) problems.push(`${field}: ${problem}`);
    }
    if (problems.length > 0) throw new SmppdError(ErrorCode.VALIDATION, problems.join('; '));
    return regulatoryTlvs(ids, tags);
  }
}
