import { Counter, Gauge, type Registry } from 'prom-client';
import type { AccountReading, BindReading } from './metric-readings.js';

const BIND_STATES = ['connecting', 'bound', 'backoff', 'stopping', 'stopped', 'failed'] as const;

/** The gauges and counters read from the binds (and the accounts' pacing) at scrape time. */
export function registerBindMetrics(r: Registry, readBinds: () => BindReading[], readAccounts: () => AccountReading[]): void {
  const perBind = (name: string, help: string, pick: (b: BindReading) => number): void => {
    new Gauge({
      name, help, labelNames: ['upstream', 'bind'], registers: [r],
      collect() {
        this.reset();
        for (const b of readBinds()) this.set({ upstream: b.upstream, bind: b.id }, pick(b));
      },
    });
  };
  const perBindCount = (name: string, help: string, pick: (b: BindReading) => number): void => {
    new Counter({
      name, help, labelNames: ['upstream', 'bind'], registers: [r],
      collect() {
        // The binds count; the counter shows their count at each scrape.
        this.reset();
        for (const b of readBinds()) this.inc({ upstream: b.upstream, bind: b.id }, pick(b));
      },
    });
  };
  perBind('smppd_bind_window_in_use', 'window slots taken: submit_sm outstanding, and accepted ones not stored yet', (b) => b.outstanding + b.held);
  perBind('smppd_bind_window_held', 'window slots of accepted submit_sm not stored yet (in smppd_bind_window_in_use)', (b) => b.held);
  perBind('smppd_bind_window_size', 'the bind\'s window', (b) => b.window);
  perBind('smppd_bind_rate_per_second', 'pacing rate in force: ratePerBind, or backoffPercent below what the SMSC was measured to accept (0 = unpaced)', (b) => b.rate);
  perBind('smppd_bind_learned_limit_per_second', 'the rate the SMSC was last measured to accept on the bind (0 = not throttled yet)', (b) => b.learnedLimit ?? 0);
  perBind('smppd_bind_tokens', 'pacing tokens saved up', (b) => (Number.isFinite(b.tokens) ? b.tokens : 0));
  perBindCount('smppd_bind_submits_total', 'submit_sm written by each bind since start (rate() of it is the achieved rate)', (b) => b.submitted);
  perBindCount('smppd_bind_throttled_total', 'submit_sm answered ESME_RTHROTTLED or ESME_RMSGQFUL on each bind', (b) => b.throttledSubmits);
  new Gauge({
    name: 'smppd_bind_state', help: '1 for the state each bind is in', labelNames: ['upstream', 'bind', 'state'], registers: [r],
    collect() {
      this.reset();
      for (const b of readBinds()) for (const s of BIND_STATES) this.set({ upstream: b.upstream, bind: b.id, state: s }, b.state === s ? 1 : 0);
    },
  });
  const perAccount = (name: string, help: string, pick: (a: AccountReading) => number): void => {
    new Gauge({
      name, help, labelNames: ['upstream'], registers: [r],
      collect() {
        this.reset();
        for (const a of readAccounts()) this.set({ upstream: a.upstream }, pick(a));
      },
    });
  };
  perAccount('smppd_account_share_per_second', 'this instance\'s share of the upstream\'s accountRate (divided equally among the instances on the store)', (a) => a.share);
  perAccount('smppd_account_rate_per_second', 'the account\'s pacing rate in force on this instance: its share, or backoffPercent below what the SMSC was measured to accept', (a) => a.rate);
  perAccount('smppd_account_learned_limit_per_second', 'the rate the SMSC was last measured to accept for the account on this instance (0 = not throttled yet)', (a) => a.learnedLimit ?? 0);
}
