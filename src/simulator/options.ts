import type { Tlvs } from '../smpp/pdu.js';
import type { BehaviourPatch } from './behaviour.js';

export interface SimulatorAccount {
  systemId: string;
  password: string;
  /** Binds this account may hold at once; more are refused ESME_RALYBND. Default: no limit. */
  maxBinds?: number;
}

export interface SimulatorTls {
  /** PEM. */
  cert: Buffer;
  key: Buffer;
  /** PEM CA bundle for verifying client certificates (with requestCert). */
  ca?: Buffer;
  /** Ask for, and require, a client certificate signed by `ca`. Default false. */
  requestCert?: boolean;
}

export interface SimulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** 0 picks a free port; `start()` says which. */
  port: number;
  /** TLS when given, plain TCP when absent. */
  tls?: SimulatorTls;
  accounts: SimulatorAccount[];
  /** Keep every submit_sm for `recordedSubmits()`. Default false (memory grows with traffic). */
  record?: boolean;
  behaviour?: BehaviourPatch;
  /** [0, 1) random source for the behaviour's mixes and delays. Default Math.random. */
  random?: () => number;
}

/** One submit_sm as the simulator received it (with `record: true`). */
export interface RecordedSubmit {
  bindId: number;
  sequenceNumber: number;
  serviceType: string;
  sourceAddrTon: number;
  sourceAddrNpi: number;
  sourceAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  destinationAddr: string;
  dataCoding: number;
  esmClass: number;
  shortMessage: Buffer;
  registeredDelivery: number;
  scheduleDeliveryTime: string;
  validityPeriod: string;
  /** The id given in submit_sm_resp; '' when the submit_sm was refused or never answered. */
  messageId: string;
  /** Its optional parameters as decoded: named ones by name, every other (vendor TLVs) in `other` with its tag, in arrival order. */
  tlvs: Tlvs | undefined;
}

/** A mobile-originated message for `sendMo`. */
export interface MoMessage {
  source: string;
  destination: string;
  shortMessage: Buffer;
  dataCoding: number;
  /** Default 0 (a plain MO). */
  esmClass?: number;
  tlvs?: Tlvs;
  /** Send only to a bind of this account. Default: any receiving bind, round-robin. */
  systemId?: string;
}
