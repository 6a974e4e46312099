/**
 * The scale-out benchmark's broker floor against a real RabbitMQ: the load it publishes is read
 * and acked once by its consumer processes (`bench/main.ts consumer`, run from the source here),
 * its figures add up, and it leaves no queue, exchange or process behind.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqplib from 'amqplib';
import { describe, expect, it } from 'vitest';
import { BenchCleanup } from '../src/cleanup.js';
import { scaleOutBody } from '../src/scaleout.js';
import { CONSUMER_URL_ENV } from '../src/consumer.js';
import { runBrokerFloorCase, type ConsumerCommand } from '../src/floor-broker.js';
import { exitOf } from '../src/proc.js';
import { AMQP_URL, noteSkipped, uniqueName } from '../../test/integration/amqp/broker.js';

noteSkipped('bench broker floor (test/integration/amqp/bench-floor-broker.test.ts)');

const FROM_SOURCE: ConsumerCommand = { module: 'bench/main.ts', execArgv: ['--import', './test/support/ts-register.mjs'] };

/** Command lines of this machine's processes that mention `text`. */
function processesNaming(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(text)) found.push(cmdline);
    } catch {
      // gone since the listing
    }
  }
  return found;
}

async function exists(kind: 'queue' | 'exchange', name: string): Promise<boolean> {
  const connection = await amqplib.connect(AMQP_URL);
  try {
    const ch = await connection.createChannel();
    ch.on('error', () => {});
    return await (kind === 'queue' ? ch.checkQueue(name) : ch.checkExchange(name)).then(() => true, () => false);
  } finally {
    await connection.close().catch(() => {});
  }
}

describe.skipIf(AMQP_URL === '')('the broker floor of the scale-out benchmark', () => {
  it('has every published request read and acked once by its consumers, and removes its queues and processes', async () => {
    const cleanup = new BenchCleanup();
    const r = await runBrokerFloorCase({ name: 'floor', consumers: 2, prefetch: 50, offeredRate: 400, seconds: 1 }, AMQP_URL, scaleOutBody, cleanup, FROM_SOURCE);
    if ('error' in r) throw new Error(r.error);
    expect(r.outcome).toBe('all consumed');
    expect(r.publish).toMatchObject({ offered: 400, published: 400, confirmed: 400, nacked: 0 });
    expect(r.consumed).toBe(400);
    expect(r.cpuUsPerMessage.consumers).toBeGreaterThan(0);
    // Acks go together, never more than one a message.
    expect(r.ackFramesPerMessage).toBeGreaterThan(0);
    expect(r.ackFramesPerMessage).toBeLessThanOrEqual(1);
    expect(r.cpuUsPerMessage.machine).toBeGreaterThanOrEqual(r.cpuUsPerMessage.consumers);
    expect(r.machinePercentAtOffered).toBe(Math.round((r.cpuUsPerMessage.machine * 400) / 10_000));
    expect(r.cleanupProblems).toEqual([]);
    expect(await exists('queue', r.queue)).toBe(false);
    expect(await exists('queue', `${r.queue}.dead`)).toBe(false);
    expect(await exists('exchange', `${r.queue}.dead`)).toBe(false);
    expect(processesNaming(r.queue)).toEqual([]);
    expect(await cleanup.runAll()).toEqual([]);
  }, 60_000);

  it('reports a consumer that cannot start as the case failing, and still removes what it made', async () => {
    const cleanup = new BenchCleanup();
    const dir = mkdtempSync(join(tmpdir(), 'smppd-bench-floor-'));
    const exitsAtOnce = join(dir, 'exits.mjs');
    writeFileSync(exitsAtOnce, 'process.exit(3);\n');
    const broken: ConsumerCommand = { module: exitsAtOnce, execArgv: [] };
    const r = await runBrokerFloorCase({ name: 'floor', consumers: 1, prefetch: 50, offeredRate: 100, seconds: 1 }, AMQP_URL, scaleOutBody, cleanup, broken);
    rmSync(dir, { recursive: true, force: true });
    expect(r).toMatchObject({ case: 'floor', error: 'the floor consumer exited with 3 before it was ready', cleanupProblems: [] });
    expect(await cleanup.runAll()).toEqual([]);
  }, 60_000);

  it('a consumer whose bench is gone without its clean-up (the IPC channel closed) stops and exits', async () => {
    const queue = uniqueName('floor');
    const child = fork(FROM_SOURCE.module, ['consumer', '--queue', queue, '--prefetch', '10'], {
      execArgv: [...FROM_SOURCE.execArgv], env: { ...process.env, [CONSUMER_URL_ENV]: AMQP_URL }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.on('message', (m) => { if ((m as { ready?: boolean }).ready === true) resolve(); });
        child.once('exit', (code) => reject(new Error(`exited with ${code} before it was ready`)));
      });
      child.disconnect();
      const code = await Promise.race([exitOf(child), new Promise<string>((r) => setTimeout(() => r('still running'), 10_000))]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
      const connection = await amqplib.connect(AMQP_URL);
      const ch = await connection.createChannel();
      await ch.deleteQueue(queue);
      await ch.deleteQueue(`${queue}.dead`);
      await ch.deleteExchange(`${queue}.dead`);
      await connection.close();
    }
  }, 30_000);
});
