/** The scale-out cases side by side: one column per case, one row per figure, notes below. */
import type { PerInstance, ScaleOutCaseResult, ScaleOutFailure, ScaleOutOutcome } from './scaleout.js';
import type { BrokerFloorOutcome, BrokerFloorResult } from './floor-broker.js';
import type { StoreFloorOutcome, StoreFloorResult } from './floor-store.js';
import type { Quantiles } from './scaleout-store.js';

/** A figure's label and how a case's result shows it. */
type Row<R> = [label: string, cell: (r: R) => string];

const ROWS: Array<Row<ScaleOutCaseResult>> = [
  ['instances × binds × rate/bind', (r) => `${r.instances} × ${r.bindsPerInstance} × ${r.ratePerBind}`],
  ['offered', (r) => `${r.publish.offered} (${r.offeredRate}/s for ${r.seconds} s)`],
  ['published / confirmed by the broker', (r) => `${r.publish.published} / ${r.publish.confirmed}${r.publish.skipped ? ` (${r.publish.skipped} skipped)` : ''}`],
  ['published/s; confirmed/s', (r) => `${r.publish.publishedPerSecond}; ${r.publish.confirmedPerSecond}`],
  ['publish → confirm p50 / p99 ms', (r) => `${r.publish.confirmP50Ms} / ${r.publish.confirmP99Ms}`],
  ['accepted (stored)', (r) => `${r.accepted}${r.storedTwice ? ` (+${r.storedTwice} stored twice)` : ''}`],
  ['accepted/s (first publish → last stored)', (r) => String(r.acceptedPerSecond)],
  ['max queue depth; left in queue; dead-lettered', (r) => `${r.maxQueueDepth}; ${r.leftInQueue}; ${r.deadLettered}`],
  ['DELIVERED', (r) => `${r.delivered}${r.delivered < r.accepted + r.notStored ? ` of ${r.accepted + r.notStored}` : ''}`],
  ['delivered/s (first publish → last DELIVERED)', (r) => String(r.deliveredPerSecond)],
  ['drain s (last publish → last DELIVERED, or → giving up)', (r) => String(r.drainSeconds)],
  ['publish → stored p50 / p99 ms', (r) => q(r.publishToStoredMs)],
  ['accept → DELIVERED p50 / p99 ms', (r) => q(r.acceptToDeliveredMs)],
  ['publish → DELIVERED p50 / p99 ms', (r) => q(r.publishToDeliveredMs)],
  ['submit_sm/s at SMSC', (r) => String(r.smscSubmitsPerSecond)],
  ['submit_sm per instance', (r) => r.perInstance.map((p) => String(p.submits)).join(' / ')],
  ['receipts per instance', (r) => r.perInstance.map((p) => Object.entries(p.receipts).map(([k, v]) => `${v} ${k}`).join(', ') || '–').join(' / ')],
  ['messages dispatched per instance, by way', (r) => r.perInstance.map((p) => Object.entries(p.dispatched ?? {}).map(([k, v]) => `${v} ${k}`).join(', ') || '–').join(' / ')],
  ['max outstanding/bind at SMSC', (r) => String(r.smscMaxOutstandingPerBind)],
  ['daemon CPU µs/msg (all instances)', (r) => String(r.daemonCpuUsPerMessage)],
  ['CPU % daemons (each)', (r) => `${r.cpuPercent.daemons} (${each(r.perInstance, (p) => p.cpuPercent)})`],
  ['CPU % simulator / bench', (r) => `${r.cpuPercent.simulator} / ${r.cpuPercent.bench}`],
  ['CPU % postgres / rabbitmq', (r) => `${r.cpuPercent.postgres ?? 'n/a'} / ${r.cpuPercent.rabbitmq ?? 'n/a'}`],
  ['CPU % machine (of 200); of it other work', (r) => `${r.cpuPercent.machine}; ${r.cpuPercent.others ?? 'n/a'}`],
  ['daemon waiting for a core %', (r) => each(r.perInstance, (p) => p.waitingPercent)],
  ['daemon peak RSS MB', (r) => each(r.perInstance, (p) => p.peakRssMb)],
  ['outcome', (r) => r.outcome],
];

function q(x: Quantiles): string {
  return Number.isNaN(x.p50) ? '–' : `${x.p50} / ${x.p99}`;
}

function each(instances: PerInstance[], value: (p: PerInstance) => number): string {
  return instances.map(value).join(' / ');
}

function isResult(r: ScaleOutOutcome): r is ScaleOutCaseResult {
  return !('error' in r);
}

/**
 * One column per case, one row per figure (the rows' last is 'outcome'): a failed case shows '–'
 * but in its outcome row, which says why.
 */
function columns<R extends { case: string }>(results: ReadonlyArray<R | ScaleOutFailure>, rows: ReadonlyArray<Row<R>>): string[] {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  const header = ['', ...results.map((r) => r.case)];
  const body = rows.map(([label, cell]) => [label, ...results.map((r) => {
    if ('error' in r) return label === 'outcome' ? `failed: ${r.error}` : '–';
    return cell(r);
  })]);
  return [line(header), line(header.map(() => '---')), ...body.map(line)];
}

/** A line for each case that could not remove all it made. */
function cleanupNotes(results: ReadonlyArray<{ case: string; cleanupProblems: string[] }>): string[] {
  return results.flatMap((r) => (r.cleanupProblems.length ? [`- ${r.case}: clean-up: ${r.cleanupProblems.join('; ')}`] : []));
}

export function renderScaleOutTable(results: ScaleOutOutcome[]): string {
  const notes = results.map((r) => {
    if (!isResult(r)) return `- ${r.case}: failed: ${r.error}${r.cleanupProblems.length ? `; clean-up: ${r.cleanupProblems.join('; ')}` : ''}`;
    const parts = [`load average ${r.loadAverage} at start`];
    parts.push(`daemon exit ${each(r.perInstance, (p) => p.exitCode ?? NaN).replace(/NaN/g, 'killed')}`);
    parts.push(`warn/error log lines ${r.perInstance.map((p) => `${p.warnings} + ${p.warningsWhileStopping} while stopping`).join(' / ')}`);
    if (r.publish.nacked || r.publish.unconfirmed) parts.push(`${r.publish.nacked} nacked, ${r.publish.unconfirmed} never confirmed`);
    if (r.publish.writeBufferFull) parts.push(`publisher found the write buffer full ${r.publish.writeBufferFull} times`);
    if (r.publish.blocked) parts.push(`broker blocked the publisher ${r.publish.blocked} times`);
    if (r.notStored) parts.push(`${r.notStored} confirmed requests not in the store`);
    if (Object.keys(r.notDelivered).length) parts.push(`not DELIVERED ${JSON.stringify(r.notDelivered)}`);
    if (r.stuck) parts.push(`parts not DELIVERED ${JSON.stringify(r.stuck.parts)}, ${r.stuck.parkedReceipts} parked receipts`);
    if (r.smscThrottled) parts.push(`${r.smscThrottled} submit_sm throttled by the SMSC`);
    parts.push(`publish → DELIVERED max ${r.publishToDeliveredMs.max} ms`, `bench ${r.benchCpuUsPerMessage} µs CPU per publish`);
    if (r.cleanupProblems.length) parts.push(`clean-up: ${r.cleanupProblems.join('; ')}`);
    return `- ${r.case}: ${parts.join('; ')}`;
  });
  const warnings = results.filter(isResult).flatMap((r) => r.firstWarnings.slice(0, 3).map((w) => `  - ${r.case}: ${w.slice(0, 300)}`));
  return [
    ...columns(results, ROWS), '', ...notes,
    ...(warnings.length ? ['', 'first daemon warnings:', ...warnings] : []),
    "(figures from the store's rows, the simulator's counters, the daemons' /metrics and /proc)",
  ].join('\n');
}

const FLOOR_ROWS: Array<Row<BrokerFloorResult>> = [
  ['consumers × prefetch', (r) => `${r.consumers} × ${r.prefetch}`],
  ['offered', (r) => `${r.publish.offered} (${r.offeredRate}/s for ${r.seconds} s)`],
  ['published / confirmed / consumed', (r) => `${r.publish.published} / ${r.publish.confirmed} / ${r.consumed}`],
  ['confirmed/s; consumed/s', (r) => `${r.publish.confirmedPerSecond}; ${r.consumedPerSecond}`],
  ['publish → confirm p50 / p99 ms', (r) => `${r.publish.confirmP50Ms} / ${r.publish.confirmP99Ms}`],
  ['basic.ack frames a message', (r) => String(r.ackFramesPerMessage)],
  ['CPU % rabbitmq / consumers / bench / machine (of 200); of it other work', (r) =>
    `${r.cpuPercent.rabbitmq ?? 'n/a'} / ${r.cpuPercent.consumers} / ${r.cpuPercent.bench} / ${r.cpuPercent.machine}; ${r.cpuPercent.others ?? 'n/a'}`],
  ['CPU µs per message: rabbitmq / consumers / bench / machine', (r) =>
    `${r.cpuUsPerMessage.rabbitmq ?? 'n/a'} / ${r.cpuUsPerMessage.consumers} / ${r.cpuUsPerMessage.bench} / ${r.cpuUsPerMessage.machine}`],
  ['machine CPU % at the offered rate (of 200)', (r) => String(r.machinePercentAtOffered)],
  ['outcome', (r) => r.outcome],
];

/** The broker's floor, one column per case; a failed case says why in its outcome row. */
export function renderBrokerFloorTable(results: BrokerFloorOutcome[]): string {
  const notes = cleanupNotes(results);
  return [...columns(results, FLOOR_ROWS), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

const STORE_FLOOR_ROWS: Array<Row<StoreFloorResult>> = [
  ['messages; a statement; connections', (r) => `${r.messages}; ${r.batch}; ${r.clients}`],
  ['DELIVERED', (r) => String(r.delivered)],
  ['commits a message', (r) => String(r.commitsPerMessage)],
  ['messages/s (as fast as it goes)', (r) => `${r.messagesPerSecond} (${r.seconds} s)`],
  ['CPU µs per message: postgres / bench', (r) => `${r.cpuUsPerMessage.postgres ?? 'n/a'} / ${r.cpuUsPerMessage.bench}`],
  ['postgres CPU % at the scale-out rate (of 200)', (r) => (r.postgresPercentAtOffered === null ? 'n/a' : `${r.postgresPercentAtOffered} (at ${r.offeredRate}/s)`)],
  ['outcome', (r) => (r.delivered === r.messages ? 'all DELIVERED' : `${r.messages - r.delivered} not DELIVERED`)],
];

/** PostgreSQL's floor, one column per case; a failed case says why. */
export function renderStoreFloorTable(results: StoreFloorOutcome[]): string {
  const notes = cleanupNotes(results);
  return [...columns(results, STORE_FLOOR_ROWS), ...(notes.length ? ['', ...notes] : [])].join('\n');
}

/**
 * One line: what the two floors take of the machine together at the scale-out rate, before the
 * simulator and smppd's own work. Empty unless both ran, on this machine, at the same rate.
 */
export function renderFloorSummary(broker: BrokerFloorOutcome[], store: StoreFloorOutcome[], cores: number): string {
  const b = broker.find((r): r is BrokerFloorResult => !('error' in r) && r.outcome === 'all consumed');
  const s = store.find((r): r is StoreFloorResult => !('error' in r) && r.postgresPercentAtOffered !== null && r.delivered === r.messages);
  if (!b || !s || b.offeredRate !== s.offeredRate) return '';
  const sum = b.machinePercentAtOffered + s.postgresPercentAtOffered!;
  return `floors at ${b.offeredRate}/s: the broker with its publisher and consumers ${b.machinePercentAtOffered} % + PostgreSQL's least writes ${s.postgresPercentAtOffered} % = ${sum} % of ${cores * 100} (${cores} cores), before the simulator and smppd's own work`;
}
