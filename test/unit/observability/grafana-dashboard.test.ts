import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/observability/metrics.js';

/** The parts of Grafana's dashboard JSON model the checks below read. */
interface Datasource { type?: string; uid?: string }
interface Target { refId: string; expr: string; datasource?: Datasource }
interface GridPos { x: number; y: number; w: number; h: number }
interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  gridPos: GridPos;
  datasource?: Datasource;
  targets?: Target[];
  panels?: Panel[];
}
interface Variable { name: string; type: string; definition: string; datasource?: Datasource }
interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[];
  schemaVersion: number;
  refresh: string;
  time: { from: string; to: string };
  templating: { list: Variable[] };
  panels: Panel[];
}

const DS_UID = '${DS_PROMETHEUS}';
const dashboard = JSON.parse(readFileSync(new URL('../../../config/grafana-dashboard.json', import.meta.url), 'utf8')) as Dashboard;
/** Every panel, those inside collapsed rows included. */
const allPanels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queryPanels = allPanels.filter((p) => p.type !== 'row');
/** Each row with its panels: those it holds when collapsed, else those below it up to the next row. */
const rows: { title: string; panels: Panel[] }[] = [];
for (const p of dashboard.panels) {
  if (p.type === 'row') rows.push({ title: p.title, panels: [...(p.panels ?? [])] });
  else rows.at(-1)?.panels.push(p);
}
const targets = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, target: t })));

const HISTOGRAM_SERIES = /_(bucket|sum|count)$/;

/** A registry as the daemon builds it, with every optional reading wired. */
async function declared(processMetrics: boolean): Promise<Map<string, { type: string; labels: readonly string[] }>> {
  const metrics = new Metrics(() => [], {
    processMetrics,
    readOutbox: async () => [],
    readQueue: async () => ({ queued: 0, inflight: 0, parked: 0 }),
    readUpstreams: () => [],
    readRecords: async () => 0,
    readAccounts: () => [],
  });
  await metrics.registry.metrics();
  return new Map(metrics.registry.getMetricsAsArray().map((m) => [
    m.name,
    // prom-client keeps a metric's label names on the instance; MetricObject does not type them.
    { type: String(m.type), labels: (m as typeof m & { labelNames?: readonly string[] }).labelNames ?? [] },
  ]));
}

/** The metric a series name of an expression belongs to: itself, or the histogram it is a series of. */
function metricOf(series: string, names: Map<string, { type: string }>): string | undefined {
  if (names.has(series)) return series;
  const base = series.replace(HISTOGRAM_SERIES, '');
  return base !== series && names.get(base)?.type === 'histogram' ? base : undefined;
}

const seriesIn = (expr: string): string[] => expr.match(/smppd_[a-z0-9_]+/g) ?? [];

function overlaps(a: GridPos, b: GridPos): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

describe('config/grafana-dashboard.json', () => {
  it('is an importable dashboard: a DS_PROMETHEUS input, schemaVersion 39, the last hour refreshed every 30 s', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.time).toEqual({ from: 'now-1h', to: 'now' });
    expect(dashboard.refresh).toBe('30s');
    expect(queryPanels.length).toBeGreaterThan(0);
  });

  it('has the rows Traffic, Binds, Queue and receipts, Webhooks, HTTP API, Queue ingress (RabbitMQ), Process and Routing and failover, each with panels', () => {
    expect(dashboard.panels[0]?.type).toBe('row');
    expect(rows.map((r) => r.title)).toEqual(['Traffic', 'Binds', 'Queue and receipts', 'Webhooks', 'HTTP API', 'Queue ingress (RabbitMQ)', 'Process', 'Routing and failover']);
    for (const r of rows) expect(r.panels.length, r.title).toBeGreaterThan(0);
  });

  it('offers the template variables upstream and client from label_values of declared metrics', async () => {
    const names = await declared(true);
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    for (const [name, label] of [['upstream', 'upstream'], ['client', 'client']] as const) {
      const v = vars.get(name);
      expect(v?.type, name).toBe('query');
      expect(v?.datasource?.uid, name).toBe(DS_UID);
      expect(v?.definition, name).toMatch(new RegExp(`^label_values\\(.+, ${label}\\)$`));
      const used = seriesIn(v?.definition ?? '');
      expect(used.length, name).toBeGreaterThan(0);
      for (const s of used) expect(names.get(s)?.labels, `${name}: ${s}`).toContain(label);
    }
  });

  it('queries only metrics smppd declares, and every metric of metrics.ts appears in a panel', async () => {
    const names = await declared(true);
    const unknown = targets.flatMap(({ panel, target }) =>
      seriesIn(target.expr).filter((s) => metricOf(s, names) === undefined).map((s) => `${panel.title}: ${s}`));
    expect(unknown).toEqual([]);

    const used = new Set(targets.flatMap(({ target }) => seriesIn(target.expr).map((s) => metricOf(s, names))));
    const own = [...(await declared(false)).keys()];
    expect(own.length).toBeGreaterThan(20);
    expect(own.filter((n) => !used.has(n))).toEqual([]);
    // The process panels read the defaults the daemon exports under the smppd_ prefix.
    for (const n of ['smppd_process_cpu_seconds_total', 'smppd_process_resident_memory_bytes', 'smppd_nodejs_eventloop_lag_seconds']) {
      expect(used.has(n), n).toBe(true);
    }
  });

  it('filters by $upstream and $client wherever a metric has that label', async () => {
    const names = await declared(true);
    const missing: string[] = [];
    for (const { panel, target } of targets) {
      // Each selector: a series name and its optional {matchers}.
      for (const [, series, matchers = ''] of target.expr.matchAll(/(smppd_[a-z0-9_]+)(?:\{([^}]*)\})?/g)) {
        const metric = metricOf(series ?? '', names);
        const labels = metric ? names.get(metric)?.labels ?? [] : [];
        if (labels.includes('upstream') && !matchers.includes('upstream=~"$upstream"')) missing.push(`${panel.title}: ${series} without $upstream`);
        if (labels.includes('client') && !matchers.includes('client=~"$client"')) missing.push(`${panel.title}: ${series} without $client`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('reads every panel and target from ${DS_PROMETHEUS}', () => {
    for (const p of allPanels) {
      if (p.type === 'row') {
        if (p.datasource) expect(p.datasource.uid, p.title).toBe(DS_UID);
        continue;
      }
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: DS_UID });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) {
        expect(t.datasource, `${p.title} ${t.refId}`).toEqual({ type: 'prometheus', uid: DS_UID });
        expect(t.expr.trim(), `${p.title} ${t.refId}`).not.toBe('');
      }
      expect(new Set(p.targets?.map((t) => t.refId)).size, p.title).toBe(p.targets?.length);
    }
  });

  it('gives every panel a unique id, a title and a description for the operator', () => {
    const ids = allPanels.map((p) => p.id);
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of queryPanels) {
      expect(p.title.trim(), `panel ${p.id}`).not.toBe('');
      expect(p.description?.length ?? 0, p.title).toBeGreaterThan(40);
    }
    const dead = queryPanels.find((p) => p.title === 'Dead events per client');
    expect(dead?.description).toContain('GET /events/dead');
  });

  it('lays the panels out on the 24-column grid, none overlapping another of its row', () => {
    expect(rows.reduce((n, r) => n + r.panels.length, 0)).toBe(queryPanels.length);
    for (const { title, panels } of rows) {
      for (const p of panels) {
        const g = p.gridPos;
        expect(g.x >= 0 && g.w > 0 && g.h > 0 && g.x + g.w <= 24, `${title}: ${p.title}`).toBe(true);
      }
      for (const [i, a] of panels.entries()) {
        for (const b of panels.slice(i + 1)) expect(overlaps(a.gridPos, b.gridPos), `${title}: ${a.title} / ${b.title}`).toBe(false);
      }
    }
    // Open rows share the dashboard's grid: nothing overlaps across rows either.
    const open = dashboard.panels;
    for (const [i, a] of open.entries()) {
      for (const b of open.slice(i + 1)) expect(overlaps(a.gridPos, b.gridPos), `${a.title} / ${b.title}`).toBe(false);
    }
  });
});
