import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { BenchCleanup, cleanUpOnSignal } from './cleanup.js';
import type { ClientResult } from './client.js';
import type { DaemonCaseResult } from './daemon-case.js';
import { DAEMON_CASES, renderDaemonTable, runDaemonCase } from './daemon.js';
import { benchMain, repoRoot, smppdMain } from './paths.js';
import { freePort } from './proc.js';
import { SCALEOUT_CASES, runScaleOutCase, scaleOutBody, type ScaleOutCase, type ScaleOutOutcome, type ScaleOutServers } from './scaleout.js';
import { BROKER_FLOOR_CASES, runBrokerFloorCase, type BrokerFloorCase, type BrokerFloorOutcome } from './floor-broker.js';
import { STORE_FLOOR_CASES, runStoreFloorCase, type StoreFloorCase, type StoreFloorOutcome } from './floor-store.js';
import { renderBrokerFloorTable, renderFloorSummary, renderScaleOutTable, renderStoreFloorTable } from './scaleout-table.js';
import { PACING_CASES, renderPacingTable, runPacingCase, type PacingCaseResult } from './pacing.js';
import { ROUTING_CASES, renderRoutingTable, runRoutingCase } from './routing.js';
import { WEBHOOK_CASES, renderWebhookTable, runWebhookCase, type WebhookCaseResult } from './webhooks.js';
import { round } from './stats.js';

interface BenchCase {
  name: string;
  binds: number;
  rate: number;
  seconds: number;
  responseDelayMs?: number;
}

const CASES: BenchCase[] = [
  { name: '1 bind @ 1,000/s', binds: 1, rate: 1000, seconds: 10 },
  { name: '4 binds @ 1,000/s', binds: 4, rate: 1000, seconds: 10 },
  { name: '10 binds @ 1,000/s', binds: 10, rate: 1000, seconds: 10 },
  { name: '1 bind @ 1,000/s, SMSC answers after 200 ms', binds: 1, rate: 1000, seconds: 10, responseDelayMs: 200 },
  { name: 'unpaced, 1 bind', binds: 1, rate: 0, seconds: 5 },
  { name: 'unpaced, 4 binds', binds: 4, rate: 0, seconds: 5 },
];

interface SimulatorBind {
  maxOutstanding: number;
  maxSubmitsPerSecond: number;
}

export interface CaseResult extends ClientResult {
  case: string;
  transport: 'tcp' | 'tls';
  smscMaxOutstanding: number;
  smscMax1sPerBind: number[];
}

const USAGE = `Usage: npm run bench -- [--transport tcp|tls|both] [--only SUBSTRING] [--seconds N] [--out DIR]
                        [--pg-url URL] [--amqp-url URL] [--scaleout-rate N]

Runs the engine benchmark: the simulator in one process, the bind pool in another, over
loopback. Prints a table and writes DIR/bench-<time>.json and DIR/latest.json
(DIR defaults to bench/results).

Before them, the routing case ('routing: …', a few seconds in the bench's own process): the
longest-prefix match over 10,000 prefixes, in ns per number. --only routing runs just that.

Then the pacing cases (names start with 'pacing:', like the engine cases over each
--transport): a simulator that throttles (ESME_RTHROTTLED) below what the binds are set to, per
bind or per account, at times changing its limit; the SMSC's counters read every 250 ms give
the rate it accepted after settling, the share it throttled and the time to settle. --seconds N
sets the length of each of their phases. --only pacing runs just those.

Then the daemon cases (names start with 'daemon:', plain TCP only, skipped with
--transport tls): 'smppd start' with the simulator in its own process, driven over HTTP:
single sendSms ingest, one 100,000-number sendbulk, and end to end to DELIVERED.
--only daemon runs just those.

Then the webhook case ('webhooks: …'): status changes made in the store at 10,000/s and
delivered by the webhook dispatcher to a receiver over loopback HTTP. --only webhooks runs it.

Then the scale-out cases ('scale-out: …', plain TCP only): send requests published to one
RabbitMQ queue at 8,000/s (--scaleout-rate N to change it), consumed by two daemons × 4 binds,
then by one daemon × 8 binds, sharing one PostgreSQL store, until every request is DELIVERED.
Before them, two floors: the same load consumed by two processes that only read and ack each
request (what RabbitMQ and its consumers cost before smppd stores or sends anything), and
PostgreSQL writing the least a shared store must per message (insert, outcome, receipt), each
with its share of the machine at the offered rate.
They need --pg-url postgres://… (a database the bench may create schemas in) and
--amqp-url amqp://… (or SMPPD_TEST_PG_URL and SMPPD_TEST_AMQP_URL); without them they are
skipped. --only scale-out runs just those.`;

const tlsDir = join(repoRoot, 'test/fixtures/tls');

export async function runBench(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      transport: { type: 'string', default: 'both' }, only: { type: 'string' }, seconds: { type: 'string' },
      out: { type: 'string', default: join(repoRoot, 'bench/results') }, help: { type: 'boolean', short: 'h' },
      'pg-url': { type: 'string' }, 'amqp-url': { type: 'string' }, 'scaleout-rate': { type: 'string' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const transports: Array<'tcp' | 'tls'> = values.transport === 'both' ? ['tcp', 'tls'] : [values.transport as 'tcp' | 'tls'];
  // First, before any process of the other cases shares the cores.
  const routingResults = ROUTING_CASES.filter((c) => !values.only || c.name.includes(values.only)).map((c) => {
    process.stderr.write(`bench: ${c.name}, ${c.numbers} numbers × ${c.rounds} rounds …\n`);
    return runRoutingCase(c);
  });
  const cases = CASES.filter((c) => !values.only || c.name.includes(values.only));
  const results: CaseResult[] = [];
  for (const c of cases) {
    for (const transport of transports) {
      const seconds = values.seconds ? Number(values.seconds) : c.seconds;
      process.stderr.write(`bench: ${c.name} over ${transport} for ${seconds} s …\n`);
      results.push(await runCase({ ...c, seconds }, transport));
    }
  }
  const pacingResults: PacingCaseResult[] = [];
  for (const c of PACING_CASES.filter((p) => !values.only || p.name.includes(values.only))) {
    for (const transport of transports) {
      const phaseSeconds = values.seconds ? Number(values.seconds) : undefined;
      process.stderr.write(`bench: ${c.name} over ${transport} for ${c.phases.reduce((s, p) => s + (phaseSeconds ?? p.seconds), 0)} s …\n`);
      pacingResults.push(await runPacingCase(c, transport, phaseSeconds));
    }
  }
  const daemonCases = transports.includes('tcp') ? DAEMON_CASES.filter((c) => !values.only || c.name.includes(values.only)) : [];
  const daemonResults: DaemonCaseResult[] = [];
  for (const c of daemonCases) {
    const seconds = values.seconds && c.kind !== 'bulk' ? Number(values.seconds) : c.seconds;
    process.stderr.write(`bench: ${c.name} over tcp${c.kind === 'bulk' ? '' : ` for ${seconds} s`} …\n`);
    daemonResults.push(await runDaemonCase({ ...c, seconds }));
  }
  const webhookCases = WEBHOOK_CASES.filter((c) => !values.only || c.name.includes(values.only));
  const webhookResults: WebhookCaseResult[] = [];
  for (const c of webhookCases) {
    const seconds = values.seconds ? Number(values.seconds) : c.seconds;
    process.stderr.write(`bench: ${c.name} for ${seconds} s …\n`);
    webhookResults.push(await runWebhookCase({ ...c, seconds }));
  }
  const picked = <C extends { name: string }>(all: C[]): C[] => (transports.includes('tcp') ? all.filter((c) => !values.only || c.name.includes(values.only)) : []);
  const plan: ScaleOutPlan = { brokerFloor: picked(BROKER_FLOOR_CASES), storeFloor: picked(STORE_FLOOR_CASES), scaleOut: picked(SCALEOUT_CASES) };
  const planned = plan.brokerFloor.length + plan.storeFloor.length + plan.scaleOut.length;
  const servers = scaleOutServers(values['pg-url'], values['amqp-url']);
  if (planned > 0 && servers === undefined) {
    process.stderr.write('bench: scale-out cases skipped; give --pg-url postgres://… and --amqp-url amqp://… (or set SMPPD_TEST_PG_URL and SMPPD_TEST_AMQP_URL) to run them\n');
  }
  const ran = servers && planned > 0 ? await runScaleOutCases(plan, servers, values.seconds, values['scaleout-rate']) : { brokerFloor: [], storeFloor: [], scaleOut: [] };
  const { scaleOut: scaleOutResults, brokerFloor: brokerFloorResults, storeFloor: storeFloorResults } = ran;
  const report = {
    when: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    command: `npm run bench${argv.length ? ` -- ${argv.map(withoutPassword).join(' ')}` : ''}`,
    routingResults,
    results,
    pacingResults,
    daemonResults,
    webhookResults,
    scaleOutResults,
    brokerFloorResults,
    storeFloorResults,
  };
  mkdirSync(values.out, { recursive: true });
  const stamp = report.when.replace(/[:.]/g, '-');
  writeFileSync(join(values.out, `bench-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(values.out, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  const tables = [
    routingResults.length > 0 ? renderRoutingTable(routingResults) : '',
    results.length > 0 ? renderTable(results) : '',
    pacingResults.length > 0 ? renderPacingTable(pacingResults) : '',
    daemonResults.length > 0 ? renderDaemonTable(daemonResults) : '',
    webhookResults.length > 0 ? renderWebhookTable(webhookResults) : '',
    scaleOutResults.length > 0 ? renderScaleOutTable(scaleOutResults) : '',
  ].filter((t) => t !== '');
  if (tables.length > 0) console.log(tables.join('\n\n'));
  if (brokerFloorResults.length > 0) console.log(`\n${renderBrokerFloorTable(brokerFloorResults)}`);
  if (storeFloorResults.length > 0) console.log(`\n${renderStoreFloorTable(storeFloorResults)}`);
  const summary = renderFloorSummary(brokerFloorResults, storeFloorResults, report.cpus);
  if (summary) console.log(`\n${summary}`);
  console.log(`\n${report.cpus} × ${report.cpuModel}, Node ${report.node}; ${report.command}`);
  return [...scaleOutResults, ...brokerFloorResults, ...storeFloorResults].some((r) => 'error' in r) ? 1 : 0;
}

/** What `--only` left of the cases that need the servers. */
interface ScaleOutPlan {
  brokerFloor: BrokerFloorCase[];
  storeFloor: StoreFloorCase[];
  scaleOut: ScaleOutCase[];
}

/**
 * The floors, then the scale-out cases, one after the other (the floors first: the PostgreSQL
 * checkpoints after the scale-out cases' writes would share their cores). Interrupted (SIGINT,
 * SIGTERM), the run removes the schemas, queues, processes and folders it created, says so in
 * one line and exits non-zero, writing no results.
 */
async function runScaleOutCases(
  plan: ScaleOutPlan, servers: ScaleOutServers, secondsArg: string | undefined, rateArg: string | undefined,
): Promise<{ brokerFloor: BrokerFloorOutcome[]; storeFloor: StoreFloorOutcome[]; scaleOut: ScaleOutOutcome[] }> {
  const cleanup = new BenchCleanup();
  const stopListening = cleanUpOnSignal(cleanup, (line, code) => {
    process.stderr.write(`${line}\n`);
    process.exit(code);
  });
  const offeredRate = (c: { offeredRate: number }): number => (rateArg ? Number(rateArg) : c.offeredRate);
  const seconds = (c: { seconds: number }): number => (secondsArg ? Number(secondsArg) : c.seconds);
  const run = async <C extends { name: string }, O extends object>(c: C, what: string, runCase: () => Promise<O>): Promise<O> => {
    process.stderr.write(`bench: ${c.name}, ${what} …\n`);
    const outcome = await runCase();
    // Interrupted: the case failed as its processes were killed; the signal's handler exits once the clean-up is done.
    if (cleanup.closed) await new Promise<never>(() => {});
    if ('error' in outcome) process.stderr.write(`bench: ${c.name} failed: ${String(outcome.error)}\n`);
    return outcome;
  };
  const ran = { brokerFloor: [] as BrokerFloorOutcome[], storeFloor: [] as StoreFloorOutcome[], scaleOut: [] as ScaleOutOutcome[] };
  try {
    for (const c of plan.brokerFloor) {
      const s = { ...c, seconds: seconds(c), offeredRate: offeredRate(c) };
      ran.brokerFloor.push(await run(c, `${s.offeredRate}/s offered for ${s.seconds} s`, () => runBrokerFloorCase(s, servers.amqpUrl, scaleOutBody, cleanup)));
    }
    for (const c of plan.storeFloor) {
      const s = { ...c, offeredRate: offeredRate(c) };
      ran.storeFloor.push(await run(c, `${s.messages} messages, ${s.batch} a statement, ${s.clients} connections`, () => runStoreFloorCase(s, servers.pgUrl, cleanup)));
    }
    for (const c of plan.scaleOut) {
      const s = { ...c, seconds: seconds(c), offeredRate: offeredRate(c) };
      ran.scaleOut.push(await run(c, `${s.offeredRate}/s offered for ${s.seconds} s`, () => runScaleOutCase(s, servers, cleanup)));
    }
  } finally {
    stopListening();
  }
  return ran;
}

/** A URL argument's password masked (--pg-url, --amqp-url): the command is printed and kept in the results. */
function withoutPassword(arg: string): string {
  return arg.replace(/([a-z]+:\/\/[^:/@\s]*:)[^@\s]*@/i, '$1***@');
}

/** The servers of the scale-out cases, from the flags or the test suite's variables; undefined without both. */
function scaleOutServers(pgUrl: string | undefined, amqpUrl: string | undefined): ScaleOutServers | undefined {
  const pg = pgUrl ?? process.env['SMPPD_TEST_PG_URL'];
  const amqp = amqpUrl ?? process.env['SMPPD_TEST_AMQP_URL'];
  return pg && amqp ? { pgUrl: pg, amqpUrl: amqp } : undefined;
}

async function runCase(c: BenchCase, transport: 'tcp' | 'tls'): Promise<CaseResult> {
  const simArgs = ['simulate', '--port', '0', '--status-port', String(await freePort()), '--no-receipts'];
  if (c.responseDelayMs) simArgs.push('--response-delay-ms', String(c.responseDelayMs));
  if (transport === 'tls') simArgs.push('--tls-cert', join(tlsDir, 'server.crt'), '--tls-key', join(tlsDir, 'server.key'));
  const sim = spawn(process.execPath, [smppdMain, ...simArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const listening = await firstJsonLine<{ port: number; statusPort: number }>(sim);
    const clientArgs = ['client', '--port', String(listening.port), '--binds', String(c.binds), '--rate', String(c.rate), '--seconds', String(c.seconds)];
    if (transport === 'tls') clientArgs.push('--ca', join(tlsDir, 'ca.crt'));
    const client = spawn(process.execPath, [benchMain, ...clientArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    const result = await firstJsonLine<ClientResult>(client);
    await exited(client);
    const status = await (await fetch(`http://127.0.0.1:${listening.statusPort}/status`)).json() as { binds: SimulatorBind[] };
    return {
      case: c.name, transport, ...result,
      smscMaxOutstanding: Math.max(0, ...status.binds.map((b) => b.maxOutstanding)),
      smscMax1sPerBind: status.binds.map((b) => b.maxSubmitsPerSecond),
    };
  } finally {
    sim.kill('SIGTERM');
    await exited(sim);
  }
}

function firstJsonLine<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      try {
        resolvePromise(JSON.parse(line) as T);
      } catch (e) {
        reject(e);
      }
    });
    child.once('exit', (code) => reject(new Error(`benchmark process exited with ${code} before reporting`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

function renderTable(results: CaseResult[]): string {
  const header = ['case', 'link', 'binds', 'rate/bind', 'achieved/bind (min–max)', 'total/s', 'max 1 s/bind sent', 'max 1 s/bind at SMSC', 'max outstanding at SMSC', 'p50 ms', 'p99 ms', 'client CPU µs/msg', 'codec µs/msg', 'peak RSS MB'];
  const rows = results.map((r) => [
    r.case, r.transport, String(r.binds), r.ratePerBind ? String(r.ratePerBind) : 'unpaced',
    `${Math.min(...r.perBindRate)}–${Math.max(...r.perBindRate)}`,
    String(r.totalRate), String(Math.max(...r.sentMax1sPerBind)), String(Math.max(...r.smscMax1sPerBind)), String(r.smscMaxOutstanding),
    String(r.p50Ms), String(r.p99Ms), String(r.cpuUsPerMessage),
    `${r.codecUsPerMessage} (${round((100 * r.codecUsPerMessage) / r.cpuUsPerMessage, 0)} %)`, String(r.peakRssMb),
  ]);
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
