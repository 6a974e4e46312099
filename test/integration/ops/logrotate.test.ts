/**
 * systemd/smppd.logrotate, run by logrotate itself (when the machine has it) against a daemon
 * child's records file: the file is renamed, smppd is told (postrotate: here a kill -HUP of the
 * child, as systemctl reload sends it), and the next records go to a new file, none lost or
 * written twice. The copy differs from the shipped file only in the path, the owner of the file it
 * creates (no user smppd here) and the postrotate command.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups } from '../../support/daemon-child.js';
import { until } from '../../support/engine.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const shipped = readFileSync(join(root, 'systemd/smppd.logrotate'), 'utf8');
const hasLogrotate = spawnSync('logrotate', ['--version']).status === 0;
const TOKEN = 'logrotate-test-token-0123456789';
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ids = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8') : '').split('\n').filter((l) => l !== '')
  .map((l) => (JSON.parse(l) as { id: string }).id);

describe('systemd/smppd.logrotate', () => {
  it('names the records path of the documented layout, never copytruncate, and signals smppd after the rename', () => {
    expect(shipped).toMatch(/^\/var\/log\/smppd\/records\.jsonl \{$/m);
    expect(shipped).not.toMatch(/^\s*copytruncate/m);
    expect(shipped).toMatch(/postrotate\n\s+systemctl reload smppd\.service/);
  });

  it('rotates a running daemon\'s records file: the next records go to the new file, each once across the two', async (ctx) => {
    if (!hasLogrotate) ctx.skip('logrotate is not installed (Debian: apt-get install logrotate)');
    const sim = new SmscSimulator({
      host: '127.0.0.1', port: 0, accounts: [{ systemId: 'rotate', password: 'rotatepw' }], behaviour: { receipts: { delayMs: 0 } },
    }, new SystemClock(), silentLog);
    const { port: smscPort } = await sim.start();
    cleanups.push(() => sim.stop());
    const folder = daemonFolder(cleanups, {
      prefix: 'smppd-logrotate-', token: TOKEN, upstream: `{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: rotate, password: rotatepw }`,
    });
    const records = join(folder.dir, 'records.jsonl');
    appendFileSync(folder.configPath, `records: { path: ${records} }\n`);
    const child = startDaemonChild(cleanups, folder.configPath);
    const port = Number((await child.next('http_listening', 1, 60_000))[0]!.port);
    const sent: string[] = [];
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/sms/sendSms`, {
          method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ senderId: 'Rotate', destinationNumber: `44770090${String(sent.length).padStart(4, '0')}`, message: 'hi', messageType: 'TEXT' }),
        });
        expect(res.status).toBe(200);
        sent.push((await res.text()).trim());
      }
    };
    await send(5);
    await until(() => ids(records).length === 5, 20_000, 'the first records');

    const conf = join(folder.dir, 'logrotate.conf');
    writeFileSync(conf, shipped
      .replace('/var/log/smppd/records.jsonl', records)
      .replace('create 0640 smppd smppd', 'create 0640')
      .replace(/systemctl reload smppd\.service[^\n]*/, `kill -HUP ${child.child.pid}`), { mode: 0o644 });
    const run = spawnSync('logrotate', ['--force', '--state', join(folder.dir, 'logrotate.state'), conf], { encoding: 'utf8' });
    expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
    await child.next('records_reopened', 1);
    await send(5);
    await until(() => ids(records).length === 5, 20_000, 'the records after the rotation');

    const rotated = readdirSync(folder.dir).filter((f) => f.startsWith('records.jsonl-'));
    expect(rotated).toHaveLength(1);
    const before = ids(join(folder.dir, rotated[0]!));
    expect(before).toEqual(sent.slice(0, 5));
    expect([...before, ...ids(records)].sort()).toEqual([...sent].sort());
  });
});
