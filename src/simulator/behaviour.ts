import { ErrorCode, SmppdError } from '../core/errors.js';
import type { MessageIdFormat, ReceiptIdStyle } from './message-id.js';
import { isReceiptStat, type ReceiptStat } from './receipt-text.js';
import { isReceiptRouting, RECEIPT_ROUTINGS, type ReceiptRouting } from './receipt-routing.js';
import { WeightedPicker } from './weighted.js';

/** Milliseconds: a fixed value, or uniform random in [min, max]. */
export type DelaySpec = number | { min: number; max: number };

export interface ReceiptBehaviour {
  /** Send receipts when registered_delivery asks for one. Default true. */
  enabled: boolean;
  /** Time from the submit_sm_resp to the receipt. Default 500 ms; 0 sends it in the same write. */
  delayMs: DelaySpec;
  /**
   * Milliseconds at least between two sends of due receipts. Under load, receipts then go out
   * in sweeps, several to a bind in one socket write, instead of one timer wake-up and one write
   * each; a receipt is at most this much later than `delayMs`, and one that falls due after a
   * quiet spell is on time. 0 = each receipt at its own time. Default 10 ms.
   */
  batchMs: number;
  /** Weighted mix of stat words. Default { DELIVRD: 1 }. */
  outcomes: Partial<Record<ReceiptStat, number>>;
  /** Chance [0, 1] that a receipt is sent twice. Default 0. */
  duplicateProbability: number;
  /** Chance [0, 1] that the receipt goes out before the submit_sm_resp. Default 0. */
  beforeResponseProbability: number;
  /** Default 'same': the receipt writes the id as submit_sm_resp did. */
  messageIdInReceipt: ReceiptIdStyle;
}

/** Everything about the simulator that tests and demos change at runtime. */
export interface SimulatorBehaviour {
  /** Delay before each submit_sm_resp. Default 0 (answered from the same read). */
  responseDelayMs: DelaySpec;
  /** submit_sm per second per bind before ESME_RTHROTTLED; 0 = no limit. Default 0. */
  throttleRatePerBind: number;
  /** Tokens the throttle saves up; 0 = rate / 50, at least 1. Default 0. */
  throttleBurst: number;
  /**
   * submit_sm per second shared by every bind of one system_id before ESME_RTHROTTLED, as SMSCs
   * limit an account; 0 = no limit. Default 0. Applies on top of `throttleRatePerBind`.
   */
  throttleRatePerAccount: number;
  /** Tokens the account's throttle saves up; 0 = rate / 50, at least 1. Default 0. */
  throttleAccountBurst: number;
  /** Weighted mix of submit_sm_resp command_status values (keys numeric). Default { 0: 1 }. */
  submitStatus: Record<number, number>;
  receipts: ReceiptBehaviour;
  /**
   * Which bind of the account a receipt goes to. Default 'same': the bind that submitted, else any
   * receiving bind of the account; 'any': round-robin over them; 'other-system-type': round-robin
   * over the binds whose bind_* carried another system_type than the submitting bind's (another
   * daemon instance), else as 'same', counted in `receiptsRoutingFallback`.
   */
  receiptRouting: ReceiptRouting;
  /** Default 'hex'. */
  messageIdFormat: MessageIdFormat;
  /** Chance [0, 1] that a submit_sm is answered with generic_nack / ESME_RSYSERR. Default 0. */
  genericNackProbability: number;
  /** Default true; false never answers enquire_link (keepalive timeout tests). */
  answerEnquireLink: boolean;
  /** Destroy a connection when it has received this many submit_sm, unanswered; 0 = never. */
  dropAfterSubmits: number;
  /** Default true; false ignores unbind (the client must give up and close). */
  answerUnbind: boolean;
}

/** What `setBehaviour` takes: any subset, `receipts` merged field by field. */
export type BehaviourPatch = Partial<Omit<SimulatorBehaviour, 'receipts'>> & { receipts?: Partial<ReceiptBehaviour> };

export function defaultBehaviour(): SimulatorBehaviour {
  return {
    responseDelayMs: 0,
    throttleRatePerBind: 0,
    throttleBurst: 0,
    throttleRatePerAccount: 0,
    throttleAccountBurst: 0,
    submitStatus: { 0: 1 },
    receipts: {
      enabled: true,
      delayMs: 500,
      batchMs: 10,
      outcomes: { DELIVRD: 1 },
      duplicateProbability: 0,
      beforeResponseProbability: 0,
      messageIdInReceipt: 'same',
    },
    receiptRouting: 'same',
    messageIdFormat: 'hex',
    genericNackProbability: 0,
    answerEnquireLink: true,
    dropAfterSubmits: 0,
    answerUnbind: true,
  };
}

export function mergeBehaviour(base: SimulatorBehaviour, patch: BehaviourPatch): SimulatorBehaviour {
  const defined = <T extends object>(o: T): Partial<T> =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
  const { receipts, ...rest } = patch;
  return { ...base, ...defined(rest), receipts: { ...base.receipts, ...defined(receipts ?? {}) } };
}

/** The behaviour with its mixes compiled for the hot path. Rebuilt on every change. */
export interface CompiledBehaviour {
  readonly spec: SimulatorBehaviour;
  /** Increases on every change, so connections notice a new throttle cheaply. */
  readonly version: number;
  readonly submitStatus: WeightedPicker<number>;
  readonly outcomes: WeightedPicker<ReceiptStat>;
  readonly throttleBurst: number;
  readonly throttleAccountBurst: number;
  responseDelay(random: () => number): number;
  receiptDelay(random: () => number): number;
}

function delayFn(spec: DelaySpec): (random: () => number) => number {
  if (typeof spec === 'number') return () => spec;
  const { min, max } = spec;
  return (random) => min + random() * (max - min);
}

/** Validates and compiles; throws SmppdError(CONFIG_INVALID) naming the key that is wrong. */
export function compileBehaviour(spec: SimulatorBehaviour, version: number): CompiledBehaviour {
  checkBehaviour(spec);
  return {
    spec,
    version,
    submitStatus: new WeightedPicker(Object.entries(spec.submitStatus).map(([k, w]) => [Number(k), w] as const)),
    outcomes: new WeightedPicker(Object.entries(spec.receipts.outcomes).map(([k, w]) => [k as ReceiptStat, w ?? 0] as const)),
    throttleBurst: spec.throttleBurst > 0 ? spec.throttleBurst : defaultThrottleBurst(spec.throttleRatePerBind),
    throttleAccountBurst: spec.throttleAccountBurst > 0 ? spec.throttleAccountBurst : defaultThrottleBurst(spec.throttleRatePerAccount),
    responseDelay: delayFn(spec.responseDelayMs),
    receiptDelay: delayFn(spec.receipts.delayMs),
  };
}

function invalid(path: string, why: string): never {
  throw new SmppdError(ErrorCode.CONFIG_INVALID, `simulator behaviour: ${path} ${why}`, { path });
}

function checkDelay(path: string, d: DelaySpec): void {
  if (typeof d === 'number') {
    if (!(Number.isFinite(d) && d >= 0)) invalid(path, 'must be a number ≥ 0 or { min, max }');
    return;
  }
  if (!(Number.isFinite(d.min) && Number.isFinite(d.max) && d.min >= 0 && d.max >= d.min)) invalid(path, 'needs 0 ≤ min ≤ max');
}

function checkProbability(path: string, p: number): void {
  if (!(Number.isFinite(p) && p >= 0 && p <= 1)) invalid(path, 'must be in [0, 1]');
}

function checkCount(path: string, n: number): void {
  if (!(Number.isFinite(n) && n >= 0)) invalid(path, 'must be a number ≥ 0');
}

function checkMix(path: string, mix: Record<string, number | undefined>, key: (k: string) => boolean): void {
  const entries = Object.entries(mix);
  for (const [k, w] of entries) {
    if (!key(k)) invalid(`${path}.${k}`, 'is not a known key');
    if (!(typeof w === 'number' && Number.isFinite(w) && w >= 0)) invalid(`${path}.${k}`, 'must be a weight ≥ 0');
  }
  if (!entries.some(([, w]) => (w ?? 0) > 0)) invalid(path, 'needs at least one positive weight');
}

function checkBehaviour(b: SimulatorBehaviour): void {
  checkDelay('responseDelayMs', b.responseDelayMs);
  checkCount('throttleRatePerBind', b.throttleRatePerBind);
  checkCount('throttleBurst', b.throttleBurst);
  checkCount('throttleRatePerAccount', b.throttleRatePerAccount);
  checkCount('throttleAccountBurst', b.throttleAccountBurst);
  checkMix('submitStatus', b.submitStatus, (k) => Number.isInteger(Number(k)) && Number(k) >= 0 && Number(k) <= 0xffffffff);
  checkDelay('receipts.delayMs', b.receipts.delayMs);
  checkCount('receipts.batchMs', b.receipts.batchMs);
  checkMix('receipts.outcomes', b.receipts.outcomes, isReceiptStat);
  checkProbability('receipts.duplicateProbability', b.receipts.duplicateProbability);
  checkProbability('receipts.beforeResponseProbability', b.receipts.beforeResponseProbability);
  if (!['same', 'decimal', 'hex'].includes(b.receipts.messageIdInReceipt)) invalid('receipts.messageIdInReceipt', "must be 'same', 'decimal' or 'hex'");
  if (typeof b.receipts.enabled !== 'boolean') invalid('receipts.enabled', 'must be a boolean');
  if (!isReceiptRouting(b.receiptRouting)) invalid('receiptRouting', `must be one of ${RECEIPT_ROUTINGS.map((r) => `'${r}'`).join(', ')}`);
  if (b.messageIdFormat !== 'hex' && b.messageIdFormat !== 'decimal') invalid('messageIdFormat', "must be 'hex' or 'decimal'");
  checkProbability('genericNackProbability', b.genericNackProbability);
  if (typeof b.answerEnquireLink !== 'boolean') invalid('answerEnquireLink', 'must be a boolean');
  checkCount('dropAfterSubmits', b.dropAfterSubmits);
  if (typeof b.answerUnbind !== 'boolean') invalid('answerUnbind', 'must be a boolean');
}

const TOP_KEYS = new Set(Object.keys(defaultBehaviour()));
const RECEIPT_KEYS = new Set(Object.keys(defaultBehaviour().receipts));

/**
 * Checks the shape of a patch that came from outside (the status endpoint's JSON). Values are
 * checked again, fully, when the merged behaviour is compiled.
 */
export function parseBehaviourPatch(input: unknown): BehaviourPatch {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) invalid('(body)', 'must be a JSON object');
  for (const key of Object.keys(input)) if (!TOP_KEYS.has(key)) invalid(key, 'is not a behaviour setting');
  const receipts = (input as Record<string, unknown>)['receipts'];
  if (receipts !== undefined) {
    if (typeof receipts !== 'object' || receipts === null || Array.isArray(receipts)) invalid('receipts', 'must be an object');
    for (const key of Object.keys(receipts)) if (!RECEIPT_KEYS.has(key)) invalid(`receipts.${key}`, 'is not a receipt setting');
  }
  const merged = mergeBehaviour(defaultBehaviour(), input);
  checkBehaviour(merged);
  return input;
}

/** The burst a throttle gets when none is set: 1/50 of the rate (20 ms worth), at least 1. */
export function defaultThrottleBurst(ratePerSecond: number): number {
  return Math.max(1, Math.floor(ratePerSecond / 50));
}
