/**
 * config/prometheus-alerts.yaml: each rule says how long (`for`), how bad (`severity`) and what to
 * do (summary, description); it names only series smppd declares; and, where promtool is on PATH
 * (Debian: apt-get install prometheus), promtool checks the file and runs each alert on series made
 * up for it: it fires where it should, and stays quiet on a healthy series.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { Metrics } from '../../../src/observability/metrics.js';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rulesPath = join(dirname(fileURLToPath(import.meta.url)), '../../../config/prometheus-alerts.yaml');
const rules = (parse(readFileSync(rulesPath, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((g) => g.rules);
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;
const NO_PROMTOOL = 'promtool is not on PATH: install it (Debian: apt-get install prometheus; .ci/run does it) to check the rules and run their tests';
if (!hasPromtool) {
  // eslint-disable-next-line no-console -- a skipped check's one line about why it did not run
  console.log(`config/prometheus-alerts.yaml: ${NO_PROMTOOL}`);
}
const work = mkdtempSync(join(tmpdir(), 'smppd-alerts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Every metric the daemon may export, its readers all wired. */
async function declared(): Promise<Set<string>> {
  const metrics = new Metrics(() => [], {
    processMetrics: false, readOutbox: async () => [], readQueue: async () => ({ queued: 0, inflight: 0, parked: 0 }), readUpstreams: () => [],
    readRecords: async () => 0,
  });
  return new Set(metrics.registry.getMetricsAsArray().map((m) => m.name));
}

const ON = { job: 'smppd', instance: 'host-a:8080' };

/** One made-up situation for promtool: series every minute, and the alerts expected at `at`. */
interface Case {
  alert: string;
  series: Array<{ series: string; values: string }>;
  at: string;
  /** The labels of each alert expected (beside severity and alertname); [] expects none. */
  firing: Array<Record<string, string>>;
}

const s = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries({ ...ON, ...labels }).map(([k, v]) => `${k}="${v}"`).join(', ')}}`, values,
});

const CASES: Case[] = [
  { alert: 'SmppdUpstreamUnavailable', series: [s('smppd_upstream_available', { upstream: 'eu' }, '1 0x10')], at: '8m', firing: [{ ...ON, upstream: 'eu' }] },
  { alert: 'SmppdUpstreamUnavailable', series: [s('smppd_upstream_available', { upstream: 'eu' }, '1 0x10')], at: '4m', firing: [] },
  {
    alert: 'SmppdBindsDown', at: '20m', firing: [{ ...ON, upstream: 'eu' }],
    series: [s('smppd_bind_state', { upstream: 'eu', bind: 'eu#0', state: 'bound' }, '1x30'), s('smppd_bind_state', { upstream: 'eu', bind: 'eu#1', state: 'backoff' }, '1x30')],
  },
  { alert: 'SmppdBindsDown', at: '20m', firing: [], series: [s('smppd_bind_state', { upstream: 'eu', bind: 'eu#1', state: 'backoff' }, '0x30')] },
  { alert: 'SmppdQueueGrowing', series: [s('smppd_queue_parts', { state: 'queued' }, '1000+100x40')], at: '30m', firing: [{ ...ON, state: 'queued' }] },
  { alert: 'SmppdQueueGrowing', series: [s('smppd_queue_parts', { state: 'queued' }, '50000x40')], at: '30m', firing: [] },
  { alert: 'SmppdDispatchStalled', series: [s('smppd_dispatch_lag_seconds', { upstream: 'eu' }, '0+60x20')], at: '15m', firing: [{ ...ON, upstream: 'eu' }] },
  { alert: 'SmppdDispatchStalled', series: [s('smppd_dispatch_lag_seconds', { upstream: 'eu' }, '0.2x20')], at: '15m', firing: [] },
  { alert: 'SmppdOutboxGrowing', series: [s('smppd_outbox_depth', { client: 'shop' }, '1000+100x40')], at: '35m', firing: [{ ...ON, client: 'shop' }] },
  { alert: 'SmppdOutboxGrowing', series: [s('smppd_outbox_depth', { client: 'shop' }, '1000-10x40')], at: '35m', firing: [] },
  { alert: 'SmppdEventsDead', series: [s('smppd_events_dead_total', { client: 'shop' }, '0x5 1x20')], at: '10m', firing: [{ ...ON, client: 'shop' }] },
  { alert: 'SmppdEventsDead', series: [s('smppd_events_dead_total', { client: 'shop' }, '3x25')], at: '10m', firing: [] },
  { alert: 'SmppdStoreErrors', series: [s('smppd_store_errors_total', { operation: 'accept' }, '0+1x20')], at: '15m', firing: [{ ...ON }] },
  { alert: 'SmppdStoreErrors', series: [s('smppd_store_errors_total', { operation: 'accept' }, '0x5 1x20')], at: '15m', firing: [] },
  { alert: 'SmppdRecordsNotWritten', series: [s('smppd_record_write_errors_total', {}, '0+1x30')], at: '25m', firing: [{ ...ON }] },
  { alert: 'SmppdRecordsNotWritten', series: [s('smppd_record_write_errors_total', {}, '0x30')], at: '25m', firing: [] },
];

/** An annotation as Prometheus renders it for an alert with `labels` (the rules use only `{{ $labels.x }}`). */
const render = (template: string, labels: Record<string, string>): string =>
  template.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name: string) => labels[name] ?? '');

describe('config/prometheus-alerts.yaml', () => {
  it('gives every rule a for, a severity of critical or warning, a summary and a description, and uses no template but $labels', () => {
    expect(rules.length).toBeGreaterThanOrEqual(8);
    expect(new Set(rules.map((r) => r.alert)).size).toBe(rules.length);
    for (const r of rules) {
      expect(r.for, r.alert).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary?.length ?? 0, r.alert).toBeGreaterThan(10);
      expect(r.annotations?.description?.length ?? 0, r.alert).toBeGreaterThan(80);
      for (const text of Object.values(r.annotations ?? {})) expect(text.replace(/\{\{ \$labels\.\w+ \}\}/g, ''), r.alert).not.toContain('{{');
    }
  });

  it('names only series smppd declares in metrics.ts', async () => {
    const names = await declared();
    const unknown = rules.flatMap((r) => (r.expr.match(/smppd_[a-z0-9_]+/g) ?? []).filter((n) => !names.has(n)).map((n) => `${r.alert}: ${n}`));
    expect(unknown).toEqual([]);
  });

  it('covers an upstream with no bind up, a growing queue, a growing outbox, dead events and store errors, each with a case for promtool', () => {
    const alerts = new Set(rules.map((r) => r.alert));
    for (const name of ['SmppdUpstreamUnavailable', 'SmppdQueueGrowing', 'SmppdOutboxGrowing', 'SmppdEventsDead', 'SmppdStoreErrors']) expect(alerts).toContain(name);
    for (const r of rules) {
      expect(CASES.some((c) => c.alert === r.alert && c.firing.length > 0), `${r.alert} fires in a case`).toBe(true);
      expect(CASES.some((c) => c.alert === r.alert && c.firing.length === 0), `${r.alert} stays quiet in a case`).toBe(true);
    }
  });

  it('passes promtool check rules', (ctx) => {
    if (!hasPromtool) ctx.skip(NO_PROMTOOL);
    const run = spawnSync('promtool', ['check', 'rules', rulesPath], { encoding: 'utf8' });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('fires each alert on the series made up for it, and no other time (promtool test rules)', (ctx) => {
    if (!hasPromtool) ctx.skip(NO_PROMTOOL);
    const byName = new Map(rules.map((r) => [r.alert, r]));
    const tests = CASES.map((c) => ({
      interval: '1m',
      input_series: c.series,
      alert_rule_test: [{
        eval_time: c.at,
        alertname: c.alert,
        exp_alerts: c.firing.map((labels) => {
          const rule = byName.get(c.alert)!;
          const all = { ...labels, ...rule.labels };
          return { exp_labels: all, exp_annotations: Object.fromEntries(Object.entries(rule.annotations ?? {}).map(([k, v]) => [k, render(v, all)])) };
        }),
      }],
    }));
    const testFile = join(work, 'alerts.test.yaml');
    writeFileSync(testFile, stringify({ rule_files: [rulesPath], evaluation_interval: '1m', tests }, { lineWidth: 0 }));
    const run = spawnSync('promtool', ['test', 'rules', testFile], { encoding: 'utf8' });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  });
});
