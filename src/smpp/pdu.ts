/**
 * One typed shape per SMPP v3.4 PDU that smppd speaks. Field names are camelCase here; the
 * snake_case names of the specification live only in `wire.ts`, which converts.
 */

/** SMPP v3.4 §2.2: the version smppd binds with. */
export const INTERFACE_VERSION_34 = 0x34;

/** SMPP v3.4 §5.2.12: esm_class bits. */
export const EsmClass = {
  /** Message type bits 2–5: 0x04 SMSC delivery receipt. */
  DELIVERY_RECEIPT: 0x04,
  /** Message type bits 2–5: 0x08 SME delivery acknowledgement. */
  DELIVERY_ACK: 0x08,
  /** Message type bits 2–5: 0x20 intermediate delivery notification. */
  INTERMEDIATE_NOTIFICATION: 0x20,
  MESSAGE_TYPE_MASK: 0x3c,
  /** GSM feature bit 6: short_message starts with a user data header. */
  UDHI: 0x40,
} as const;

/** SMPP v3.4 §5.2.17: registered_delivery, SMSC delivery receipt requested (final outcome). */
export const REGISTERED_DELIVERY_FINAL = 0x01;

/** A TLV that smppd does not model by name, kept as raw bytes so it survives a re-encode. */
export interface RawTlv {
  tag: number;
  value: Buffer;
}

/** Optional parameters (SMPP v3.4 §5.3) smppd reads or writes by name. */
export interface Tlvs {
  /** 0x001E, cstring: the SMSC message id a receipt is about. */
  receiptedMessageId?: string;
  /** 0x0427, 1 byte: 1 ENROUTE … 8 REJECTED (SMPP v3.4 §5.2.28). */
  messageState?: number;
  /** 0x0423, 3 bytes: network type, then a 2-byte error code. */
  networkErrorCode?: Buffer;
  /** 0x0424: the whole message when short_message is empty. */
  messagePayload?: Buffer;
  /** 0x020C, 0x020E, 0x020F: SAR concatenation. */
  sarMsgRefNum?: number;
  sarTotalSegments?: number;
  sarSegmentSeqnum?: number;
  /** 0x0204: the ESME's own reference, echoed by some SMSCs. */
  userMessageReference?: number;
  /** Every other TLV, including vendor ones, in arrival order. */
  other?: RawTlv[];
}

interface Header {
  sequenceNumber: number;
  /** 0 in requests; the SMPP command_status in responses (a value, never an exception). */
  commandStatus: number;
}

export type BindCommand = 'bind_transmitter' | 'bind_receiver' | 'bind_transceiver';
export type BindRespCommand = `${BindCommand}_resp`;

export interface BindPdu extends Header {
  command: BindCommand;
  systemId: string;
  password: string;
  systemType: string;
  interfaceVersion: number;
  addrTon: number;
  addrNpi: number;
  addressRange: string;
}

export interface BindRespPdu extends Header {
  command: BindRespCommand;
  systemId: string;
  tlvs?: Tlvs;
}

/** Service type and both addresses, as submit_sm, deliver_sm and data_sm carry them. */
export interface AddressFields {
  serviceType: string;
  sourceAddrTon: number;
  sourceAddrNpi: number;
  sourceAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  destinationAddr: string;
  esmClass: number;
}

/** The fields submit_sm and deliver_sm share (SMPP v3.4 §4.4.1, §4.6.1). */
export interface ShortMessageFields extends AddressFields {
  protocolId: number;
  priorityFlag: number;
  /** Absolute or relative SMPP time string, or '' for none. */
  scheduleDeliveryTime: string;
  validityPeriod: string;
  registeredDelivery: number;
  replaceIfPresentFlag: number;
  /** Always explicit: the codec's own guess is never used. */
  dataCoding: number;
  smDefaultMsgId: number;
  /** Pre-encoded bytes, UDH included when esmClass has UDHI. At most 254 bytes. */
  shortMessage: Buffer;
  tlvs?: Tlvs;
}

export interface SubmitSmPdu extends Header, ShortMessageFields {
  command: 'submit_sm';
}

export interface DeliverSmPdu extends Header, ShortMessageFields {
  command: 'deliver_sm';
}

export interface DataSmPdu extends Header, AddressFields {
  command: 'data_sm';
  registeredDelivery: number;
  dataCoding: number;
  tlvs?: Tlvs;
}

export interface MessageIdRespPdu extends Header {
  command: 'submit_sm_resp' | 'deliver_sm_resp' | 'data_sm_resp';
  /** The SMSC's id for the message (submit_sm_resp); '' when the status is an error. */
  messageId: string;
  tlvs?: Tlvs;
}

export interface BareCommandPdu extends Header {
  command: 'enquire_link' | 'enquire_link_resp' | 'unbind' | 'unbind_resp' | 'generic_nack';
}

/** Any other valid command: decoded far enough to answer it, not further. */
export interface OtherPdu extends Header {
  command: 'other';
  commandId: number;
  /** The SMPP name of the command, or 'unknown'. */
  name: string;
}

export type Pdu =
  | BindPdu
  | BindRespPdu
  | SubmitSmPdu
  | DeliverSmPdu
  | DataSmPdu
  | MessageIdRespPdu
  | BareCommandPdu
  | OtherPdu;

export type PduCommand = Pdu['command'];

/** SMPP v3.4 §5.1.2.1: a response has bit 31 of command_id set. */
export function isResponseId(commandId: number): boolean {
  return (commandId & 0x80000000) !== 0;
}

export function isResponse(pdu: Pdu): boolean {
  switch (pdu.command) {
    case 'bind_transmitter_resp':
    case 'bind_receiver_resp':
    case 'bind_transceiver_resp':
    case 'submit_sm_resp':
    case 'deliver_sm_resp':
    case 'data_sm_resp':
    case 'enquire_link_resp':
    case 'unbind_resp':
    case 'generic_nack':
      return true;
    case 'bind_transmitter':
    case 'bind_receiver':
    case 'bind_transceiver':
    case 'submit_sm':
    case 'deliver_sm':
    case 'data_sm':
    case 'enquire_link':
    case 'unbind':
      return false;
    case 'other':
      return isResponseId(pdu.commandId);
  }
}

/** Defaults for a submit_sm; callers set addresses, dataCoding and shortMessage. */
export function submitSmDefaults(): Omit<SubmitSmPdu, 'sequenceNumber' | 'destinationAddr' | 'shortMessage' | 'dataCoding'> {
  return {
    command: 'submit_sm',
    commandStatus: 0,
    serviceType: '',
    sourceAddrTon: 0,
    sourceAddrNpi: 0,
    sourceAddr: '',
    destAddrTon: 1,
    destAddrNpi: 1,
    esmClass: 0,
    protocolId: 0,
    priorityFlag: 0,
    scheduleDeliveryTime: '',
    validityPeriod: '',
    registeredDelivery: 0,
    replaceIfPresentFlag: 0,
    smDefaultMsgId: 0,
  };
}
