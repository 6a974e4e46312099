export { SmscSimulator } from './simulator.js';
export type { MoMessage, RecordedSubmit, SimulatorAccount, SimulatorOptions, SimulatorTls } from './options.js';
export type { BehaviourPatch, DelaySpec, ReceiptBehaviour, SimulatorBehaviour } from './behaviour.js';
export { defaultBehaviour, parseBehaviourPatch } from './behaviour.js';
export type { BindMode, BindSnapshot, CounterValues, SimulatorCounters, TotalCounters } from './counters.js';
export type { MessageIdFormat, ReceiptIdStyle } from './message-id.js';
export { RECEIPT_ROUTINGS, type ReceiptRouting } from './receipt-routing.js';
export { RECEIPT_STATS, formatReceiptText, type ReceiptStat } from './receipt-text.js';
export { SimStatus, statusName } from './command-status.js';
