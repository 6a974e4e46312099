import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { runSimulate } from '../../../src/cli/simulate.js';

function io(signal?: AbortSignal): { out: string[]; err: string[]; stdout: (l: string) => void; stderr: (l: string) => void; signal?: AbortSignal } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (l) => out.push(l), stderr: (l) => err.push(l), signal };
}

async function until(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('smppd simulate', () => {
  it('prints usage for --help and refuses bad flags with exit code 2', async () => {
    const help = io();
    expect(await runSimulate(['--help'], help)).toBe(0);
    expect(help.out.join('\n')).toContain('--throttle-rate');
    expect(help.out.join('\n')).toContain('--account-throttle-rate');
    expect(help.out.join('\n')).toContain('--throttle-burst');
    expect(help.out.join('\n')).toContain('--receipt-routing');
    const bad = io();
    expect(await runSimulate(['--message-id-format', 'octal'], bad)).toBe(2);
    expect(bad.err.join('\n')).toContain('--message-id-format');
    const unknown = io();
    expect(await runSimulate(['--frobnicate'], unknown)).toBe(2);
    const routing = io();
    expect(await runSimulate(['--receipt-routing', 'nearest'], routing)).toBe(2);
    expect(routing.err.join('\n')).toContain("--receipt-routing must be one of same, any, other-system-type, got 'nearest'");
    const rate = io();
    expect(await runSimulate(['--account-throttle-rate', 'fast'], rate)).toBe(2);
    expect(rate.err.join('\n')).toContain("--account-throttle-rate must be a number ≥ 0, got 'fast'");
    const half = io();
    expect(await runSimulate(['--tls-cert', 'x.crt'], half)).toBe(2);
  });

  it('listens, prints one JSON line, and on stop prints the final counters', async () => {
    const stop = new AbortController();
    const cli = io(stop.signal);
    const exit = runSimulate(['--port', '0', '--status-port', '0', '--no-receipts', '--message-id-format', 'decimal'], cli);
    await until(() => cli.out.length === 1);
    const listening = JSON.parse(cli.out[0]!) as { event: string; port: number; statusPort: number | null };
    expect(listening).toMatchObject({ event: 'listening', statusPort: null });
    const socket = connect({ host: '127.0.0.1', port: listening.port });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.destroy();
    stop.abort();
    expect(await exit).toBe(0);
    const final = JSON.parse(cli.out[1]!) as { event: string; counters: { connectionsAccepted: number } };
    expect(final.event).toBe('stopped');
    expect(final.counters.connectionsAccepted).toBeLessThanOrEqual(1); // the accept may not have run before the stop
  });

  it('--receipt-routing and --account-throttle-rate set the behaviour, which the status endpoint shows and changes', async () => {
    const stop = new AbortController();
    const cli = io(stop.signal);
    const exit = runSimulate(['--port', '0', '--status-port', String(await freePort()), '--receipt-routing', 'other-system-type', '--account-throttle-rate', '40', '--throttle-rate', '30', '--throttle-burst', '15', '--account-throttle-burst', '8'], cli);
    await until(() => cli.out.length === 1);
    const { statusPort } = JSON.parse(cli.out[0]!) as { statusPort: number };
    const behaviour = async (init?: RequestInit) => {
      const res = await fetch(`http://127.0.0.1:${statusPort}/behaviour`, init);
      return { status: res.status, body: (await res.json()) as { receiptRouting?: string; throttleRatePerAccount?: number; throttleAccountBurst?: number; throttleBurst?: number; error?: string } };
    };
    try {
      expect((await behaviour()).body).toMatchObject({
        receiptRouting: 'other-system-type', throttleRatePerAccount: 40, throttleAccountBurst: 8, throttleRatePerBind: 30, throttleBurst: 15,
      });
      const post = (patch: object) => behaviour({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(patch) });
      const refused = await post({ receiptRouting: 'elsewhere' });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toContain('receiptRouting');
      expect(await post({ receiptRouting: 'any' })).toMatchObject({ status: 200, body: { receiptRouting: 'any' } });
      expect((await post({ throttleAccountBurst: -1 })).body.error).toContain('throttleAccountBurst');
      expect(await post({ throttleRatePerAccount: 0, throttleAccountBurst: 3 })).toMatchObject({ status: 200, body: { throttleRatePerAccount: 0, throttleAccountBurst: 3 } });
    } finally {
      stop.abort();
    }
    expect(await exit).toBe(0);
  });
});
