/**
 * The pacing cases: the bind pool (the load client, in its own process, its queue kept full)
 * against a simulator that throttles, as the engine cases run them. The simulator's counters are
 * read every 250 ms; the SMSC's limit is set before the binds connect and changed at a phase's
 * start through its status endpoint (POST /behaviour).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BehaviourPatch, SimulatorCounters } from '../../src/simulator/index.js';
import type { ClientResult, PacingSample } from './client.js';
import { phaseFigures, type PhaseFigures, type SmscReading } from './pacing-figures.js';
import { benchMain, repoRoot, smppdMain } from './paths.js';
import { CpuMeter, exitOf, freePort, percentOfCore, sleep } from './proc.js';
import { round } from './stats.js';

export interface PacingPhase {
  /** Default length; `--seconds` sets every phase's. */
  seconds: number;
  /** The simulator's throttle from the phase's start. */
  behaviour: BehaviourPatch;
  /** submit_sm/s the SMSC accepts in the phase: the bind's limit × binds, or the account's. */
  limit: number;
}

export interface PacingCase {
  name: string;
  binds: number;
  /** 0 = unpaced. */
  ratePerBind: number;
  /** The upstream's accountRate; 0 = none. */
  accountRate: number;
  /** Whose limit the SMSC enforces: each bind's, or the account's (all binds of the system_id together). */
  smscLimits: 'bind' | 'account';
  phases: PacingPhase[];
}

/** The simulator's readings of the counters are this far apart (ms); every phase is a whole number of them. */
export const READING_MS = 250;

export const PACING_CASES: PacingCase[] = [
  {
    name: 'pacing: 1 bind @ 1,000/s, SMSC 500/s a bind', binds: 1, ratePerBind: 1000, accountRate: 0, smscLimits: 'bind',
    phases: [{ seconds: 30, behaviour: { throttleRatePerBind: 500, throttleBurst: 10 }, limit: 500 }],
  },
  {
    name: 'pacing: 1 bind, ratePerBind 0, SMSC 1,000/s a bind', binds: 1, ratePerBind: 0, accountRate: 0, smscLimits: 'bind',
    phases: [{ seconds: 30, behaviour: { throttleRatePerBind: 1000, throttleBurst: 20 }, limit: 1000 }],
  },
  {
    name: 'pacing: 1 bind @ 1,000/s, SMSC 800 → 300 → 800/s a bind', binds: 1, ratePerBind: 1000, accountRate: 0, smscLimits: 'bind',
    // Burst 0: the simulator's default, 1/50 of the rate (16, 6, 16).
    phases: [
      { seconds: 15, behaviour: { throttleRatePerBind: 800, throttleBurst: 0 }, limit: 800 },
      { seconds: 15, behaviour: { throttleRatePerBind: 300 }, limit: 300 },
      { seconds: 15, behaviour: { throttleRatePerBind: 800 }, limit: 800 },
    ],
  },
  {
    name: 'pacing: 4 binds @ 1,000/s, accountRate 4,000/s, SMSC 1,000/s an account', binds: 4, ratePerBind: 1000, accountRate: 4000, smscLimits: 'account',
    phases: [{ seconds: 30, behaviour: { throttleRatePerAccount: 1000, throttleAccountBurst: 20 }, limit: 1000 }],
  },
];

/** What the pool said of its pacing at a phase's end. */
export interface PoolPacingAtEnd {
  /** Per bind: the limit it learned, null before its first throttle measured. */
  learnedLimits: Array<number | null>;
  /** Per bind: its rate (0 = unpaced). */
  rates: number[];
  accountLearnedLimit: number | null;
  accountRate: number | null;
  /** Throttles that started a measurement in the phase, the binds' and the account's. */
  throttleEpisodes: number;
}

export interface LearnedAt {
  t: number;
  binds: Array<number | null>;
  account: number | null;
}

export interface PacingPhaseResult extends PhaseFigures, PoolPacingAtEnd {
  fromS: number;
  toS: number;
  behaviour: BehaviourPatch;
  limit: number;
}

export interface PacingCaseResult {
  case: string;
  transport: 'tcp' | 'tls';
  binds: number;
  ratePerBind: number;
  accountRate: number;
  smscLimits: 'bind' | 'account';
  seconds: number;
  phases: PacingPhaseResult[];
  /** submit_sm/s the SMSC accepted in each second of the case. */
  acceptedEachSecond: number[];
  /** The pool's learned limits (per bind, and the account's) each time one changed, `t` s after the start. */
  learnedOverTime: LearnedAt[];
  /** The simulator's totals at the end, and per bind. */
  smsc: { received: number; accepted: number; throttled: number; perBind: Array<{ received: number; accepted: number; throttled: number }> };
  /**
   * What the pool counted while the client ran (the case's seconds and one more): accepted, failed
   * (the queue it still held at its stop among them), answered ESME_RTHROTTLED.
   */
  client: { accepted: number; failed: number; throttledSubmits: number; cpuUsPerMessage: number };
  /** % of one core (of 200 on two) over the case: the simulator, the load client, the whole machine. */
  cpuPercent: { simulator: number; client: number; machine: number };
  readings: number;
}

const tlsDir = join(repoRoot, 'test/fixtures/tls');

/** A child's stdout as JSON lines, read once, handed out in order to whoever waits for the next wanted one. */
class JsonLines {
  readonly #seen: unknown[] = [];
  readonly #waiting: Array<{ wanted: (l: unknown) => boolean; resolve: (l: unknown) => void; reject: (e: Error) => void }> = [];
  #ended: Error | undefined;

  constructor(child: ChildProcess, what: string) {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: unknown;
      try {
        line = JSON.parse(text);
      } catch {
        return;
      }
      const w = this.#waiting.findIndex((x) => x.wanted(line));
      if (w >= 0) this.#waiting.splice(w, 1)[0]!.resolve(line);
      else this.#seen.push(line);
    });
    child.once('exit', (code) => {
      this.#ended = new Error(`${what} exited with ${code} before reporting`);
      for (const w of this.#waiting.splice(0)) w.reject(this.#ended);
    });
  }

  next<T>(wanted: (l: unknown) => boolean): Promise<T> {
    const i = this.#seen.findIndex(wanted);
    if (i >= 0) return Promise.resolve(this.#seen.splice(i, 1)[0] as T);
    if (this.#ended) return Promise.reject(this.#ended);
    return new Promise<unknown>((resolve, reject) => this.#waiting.push({ wanted, resolve, reject })) as Promise<T>;
  }
}

const has = (key: string) => (l: unknown): boolean => typeof l === 'object' && l !== null && key in l;

/** Runs one case over `transport`; `phaseSeconds` (the --seconds flag) sets every phase's length. */
export async function runPacingCase(c: PacingCase, transport: 'tcp' | 'tls', phaseSeconds?: number): Promise<PacingCaseResult> {
  const phases = c.phases.map((p) => ({ ...p, seconds: phaseSeconds ?? p.seconds }));
  if (phases.some((p) => (p.seconds * 1000) % READING_MS !== 0)) throw new Error(`a pacing phase must last a whole number of ${READING_MS} ms`);
  const total = phases.reduce((s, p) => s + p.seconds, 0);
  const statusPort = await freePort();
  const simArgs = ['simulate', '--port', '0', '--status-port', String(statusPort), '--no-receipts'];
  if (transport === 'tls') simArgs.push('--tls-cert', join(tlsDir, 'server.crt'), '--tls-key', join(tlsDir, 'server.key'));
  const sim = spawn(process.execPath, [smppdMain, ...simArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
  let client: ChildProcess | undefined;
  try {
    const listening = await new JsonLines(sim, 'the simulator').next<{ port: number }>(has('port'));
    await setBehaviour(statusPort, phases[0]!.behaviour);
    // The client goes on a second past the case, so that the last reading still sees it busy.
    const clientArgs = ['client', '--port', String(listening.port), '--binds', String(c.binds), '--rate', String(c.ratePerBind),
      '--seconds', String(total + 1), '--account-rate', String(c.accountRate), '--pacing'];
    if (transport === 'tls') clientArgs.push('--ca', join(tlsDir, 'ca.crt'));
    client = spawn(process.execPath, [benchMain, ...clientArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = new JsonLines(client, 'the load client');
    await lines.next(has('event'));
    const meters = { simulator: CpuMeter.ofPid(sim.pid!), client: CpuMeter.ofPid(client.pid!), machine: CpuMeter.ofMachine() };
    const readings = await readWhileRunning(statusPort, phases, performance.now());
    const cpuPercent = { simulator: percentOfCore(meters.simulator.elapsed()), client: percentOfCore(meters.client.elapsed()), machine: percentOfCore(meters.machine.elapsed()) };
    const result = await lines.next<ClientResult>(has('accepted'));
    await exitOf(client);
    const status = await counters(statusPort);
    let from = 0;
    const phaseResults = phases.map((p) => {
      const span = { from: from * 1000, to: (from + p.seconds) * 1000, limit: p.limit };
      from += p.seconds;
      return { fromS: span.from / 1000, toS: span.to / 1000, behaviour: p.behaviour, limit: p.limit, ...phaseFigures(readings, span), ...poolPacingAt(result.pacing ?? [], span) };
    });
    const last = result.pacing?.at(-1);
    return {
      case: c.name, transport, binds: c.binds, ratePerBind: c.ratePerBind, accountRate: c.accountRate, smscLimits: c.smscLimits, seconds: total,
      phases: phaseResults,
      acceptedEachSecond: eachSecond(readings, total),
      learnedOverTime: learnedOverTime(result.pacing ?? []),
      smsc: { ...countsOf(status.totals), perBind: status.binds.map(countsOf) },
      client: {
        accepted: result.accepted, failed: result.failed, cpuUsPerMessage: result.cpuUsPerMessage,
        throttledSubmits: last ? last.binds.reduce((s, b) => s + b.throttledSubmits, 0) : 0,
      },
      cpuPercent,
      readings: readings.length,
    };
  } finally {
    if (client && client.exitCode === null && client.signalCode === null) {
      client.kill('SIGKILL');
      await exitOf(client);
    }
    sim.kill('SIGTERM');
    await exitOf(sim);
  }
}

/**
 * Reads the simulator's counters every READING_MS from `start` to the case's end, and at each
 * phase's start (after the reading there) gives it the phase's throttle. A reading's time is when
 * its answer came: the counters were read just before.
 */
async function readWhileRunning(statusPort: number, phases: PacingPhase[], start: number): Promise<SmscReading[]> {
  const changes = new Map<number, BehaviourPatch>();
  let at = 0;
  for (const p of phases) {
    if (at > 0) changes.set(at / READING_MS, p.behaviour);
    at += p.seconds * 1000;
  }
  const readings: SmscReading[] = [];
  for (let k = 0; k * READING_MS <= at; k++) {
    await sleep(start + k * READING_MS - performance.now());
    const status = await counters(statusPort);
    readings.push({ t: round(performance.now() - start, 1), ...countsOf(status.totals) });
    const change = changes.get(k);
    if (change) await setBehaviour(statusPort, change);
  }
  return readings;
}

/** The pool's learned limits and rates at the phase's end, and the throttle episodes in it. */
function poolPacingAt(samples: PacingSample[], span: { from: number; to: number }): PoolPacingAtEnd {
  const atOrBefore = (t: number): PacingSample | undefined => [...samples].reverse().find((s) => s.t <= t);
  const end = atOrBefore(span.to);
  const begin = atOrBefore(span.from);
  const episodes = (s: PacingSample | undefined): number => (s ? s.binds.reduce((n, b) => n + b.throttleEpisodes, 0) + (s.account?.throttleEpisodes ?? 0) : 0);
  return {
    learnedLimits: end ? end.binds.map((b) => (b.learnedLimit === null ? null : round(b.learnedLimit, 1))) : [],
    rates: end ? end.binds.map((b) => round(b.rate, 1)) : [],
    accountLearnedLimit: end?.account?.learnedLimit == null ? null : round(end.account.learnedLimit, 1),
    accountRate: end?.account ? round(end.account.rate, 1) : null,
    throttleEpisodes: episodes(end) - (span.from > 0 ? episodes(begin) : 0),
  };
}

/** The samples at which a learned limit changed, rounded to 0.1/s. */
function learnedOverTime(samples: PacingSample[]): LearnedAt[] {
  const out: LearnedAt[] = [];
  let last = '';
  for (const s of samples) {
    const at = {
      t: round(s.t / 1000, 1),
      binds: s.binds.map((b) => (b.learnedLimit === null ? null : round(b.learnedLimit, 1))),
      account: s.account?.learnedLimit == null ? null : round(s.account.learnedLimit, 1),
    };
    const key = JSON.stringify([at.binds, at.account]);
    if (key !== last) out.push(at);
    last = key;
  }
  return out;
}

/** submit_sm/s accepted in each whole second, between the readings nearest its edges. */
function eachSecond(readings: SmscReading[], seconds: number): number[] {
  const nearest = (t: number): SmscReading => readings.reduce((a, b) => (Math.abs(b.t - t) < Math.abs(a.t - t) ? b : a));
  return Array.from({ length: seconds }, (_, s) => {
    const a = nearest(s * 1000);
    const b = nearest((s + 1) * 1000);
    return b.t > a.t ? round(((b.accepted - a.accepted) * 1000) / (b.t - a.t), 0) : 0;
  });
}

function countsOf(c: { submitsReceived: number; submitResponses: Record<string, number>; throttled: number }): { received: number; accepted: number; throttled: number } {
  return { received: c.submitsReceived, accepted: c.submitResponses['ESME_ROK'] ?? 0, throttled: c.throttled };
}

async function counters(statusPort: number): Promise<SimulatorCounters> {
  return (await (await fetch(`http://127.0.0.1:${statusPort}/status`)).json()) as SimulatorCounters;
}

async function setBehaviour(statusPort: number, patch: BehaviourPatch): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${statusPort}/behaviour`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
  if (!res.ok) throw new Error(`POST /behaviour answered ${res.status}: ${await res.text()}`);
}

/** One row per phase: what the SMSC accepted after settling, the share throttled, and what the pool learned. */
export function renderPacingTable(results: PacingCaseResult[]): string {
  const header = ['case', 'link', 'SMSC limit', 'phase', 'accepted/s after settling', '% of limit', '1-s windows % (min–max)', 'throttled after settling %',
    'settle s', 'learned limit (pool)', 'throttle episodes', 'CPU % sim / client / machine (of 200)'];
  const orDash = (v: number | null): string => (v === null ? '–' : String(v));
  const rows = results.flatMap((r) => r.phases.map((p) => [
    r.case, r.transport, `${p.limit}/s ${r.smscLimits === 'account' ? 'an account' : 'a bind'}`,
    `${p.fromS}–${p.toS} s`, orDash(p.acceptedPerSecond), orDash(p.achievedPercent),
    p.windowMinPercent === null ? '–' : `${p.windowMinPercent}–${p.windowMaxPercent}`, orDash(p.throttledPercent), orDash(p.settleSeconds),
    [p.accountLearnedLimit === null ? '' : `account ${p.accountLearnedLimit}; `, r.binds > 1 ? 'binds ' : '', p.learnedLimits.map(orDash).join(' / ')].join(''),
    String(p.throttleEpisodes),
    `${r.cpuPercent.simulator} / ${r.cpuPercent.client} / ${r.cpuPercent.machine}`,
  ]));
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
