/**
 * The per-message records of `smppd start` (records.path), the daemon as a child process against
 * the simulator in this process: one line per message that reached its final status, matching
 * what the store committed; SIGHUP after the file was renamed (logrotate) sends the next lines to
 * a new file, none lost or doubled across the two; and records queued but not yet written when the
 * process is killed -9 are written by the next start.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/core/clock.js';
import { silentLog } from '../../src/core/log.js';
import type { RecordLine } from '../../src/events/record-line.js';
import { SmscSimulator } from '../../src/simulator/simulator.js';
import { daemonFolder, startDaemonChild, type Cleanups, type DaemonFolder } from '../support/daemon-child.js';
import { until } from '../support/engine.js';
import type { JsonLinesProcess } from '../support/json-lines-process.js';

const TOKEN = 'records-test-token-0123456789';
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(recordsPath: string): Promise<{ sim: SmscSimulator; folder: DaemonFolder }> {
  const sim = new SmscSimulator({
    host: '127.0.0.1', port: 0, accounts: [{ systemId: 'records', password: 'recpw' }],
    behaviour: { receipts: { delayMs: { min: 0, max: 30 } } },
  }, new SystemClock(), silentLog);
  const { port } = await sim.start();
  cleanups.push(() => sim.stop());
  const folder = daemonFolder(cleanups, {
    prefix: 'smppd-records-', token: TOKEN,
    upstream: `{ name: sim, host: 127.0.0.1, port: ${port}, systemId: records, password: recpw, binds: 2 }`,
  });
  appendFileSync(folder.configPath, `records: { path: ${recordsPath} }\n`);
  return { sim, folder };
}

async function started(configPath: string): Promise<{ child: JsonLinesProcess; port: number }> {
  const child = startDaemonChild(cleanups, configPath);
  const [line] = await child.next('http_listening', 1, 60_000);
  return { child, port: Number(line!.port) };
}

/** Sends one message; resolves with its id. */
async function send(port: number, destination: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/sms/sendSms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ senderId: 'Records', destinationNumber: destination, message: 'hello', messageType: 'TEXT' }),
  });
  expect(res.status).toBe(200);
  return (await res.text()).trim();
}

const linesOf = (path: string): RecordLine[] => (existsSync(path) ? readFileSync(path, 'utf8') : '').split('\n').filter((l) => l !== '')
  .map((l) => JSON.parse(l) as RecordLine);

/** The store's view, read-only beside the daemon: each message's status, and the records still queued. */
function storeView(storePath: string): { statuses: Map<string, string>; queued: number } {
  const db = new Database(storePath, { readonly: true, fileMustExist: true });
  try {
    const statuses = new Map((db.prepare('SELECT id, status FROM messages').all() as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]));
    const { n } = db.prepare('SELECT COUNT(*) AS n FROM message_records').get() as { n: number };
    return { statuses, queued: n };
  } finally {
    db.close();
  }
}

describe('message records of the daemon', () => {
  it('one line per final message — DELIVERED, FAILED, REJECTED — with what the store committed; none for a message still SENT', async () => {
    const { sim, folder } = await setUp('records.jsonl');
    const path = join(folder.dir, 'records.jsonl');
    const { port } = await started(folder.configPath);
    const delivered = [await send(port, '447700900001'), await send(port, '447700900002')];
    await until(() => linesOf(path).length === 2, 20_000, 'the delivered records');
    sim.setBehaviour({ receipts: { outcomes: { UNDELIV: 1 } } });
    const failed = [await send(port, '447700900003')];
    await until(() => linesOf(path).length === 3, 20_000, 'the failed record');
    sim.setBehaviour({ submitStatus: { 0x0b: 1 } });
    const rejected = [await send(port, '447700900004')];
    await until(() => linesOf(path).length === 4, 20_000, 'the rejected record');
    sim.setBehaviour({ submitStatus: { 0: 1 }, receipts: { enabled: false } });
    const sent = await send(port, '447700900005');
    await until(() => storeView(folder.storePath).statuses.get(sent) === 'SENT', 20_000, 'the last message SENT');

    const lines = linesOf(path);
    // The two delivered ones in the order of their receipts, then the others.
    expect(lines.slice(0, 2).map((l) => [l.id, l.status]).sort()).toEqual(delivered.map((id) => [id, 'DELIVERED']).sort());
    expect(lines.slice(2).map((l) => [l.id, l.status])).toEqual([[failed[0], 'FAILED'], [rejected[0], 'REJECTED']]);
    const { statuses, queued } = storeView(folder.storePath);
    for (const l of lines) expect(statuses.get(l.id), l.id).toBe(l.status);
    expect(queued).toBe(0);
    const first = lines.find((l) => l.id === delivered[0])!;
    expect(first).toMatchObject({
      v: 1, client: 'app', upstream: 'sim', route: 'default', batchId: null, sender: 'Records', destination: '447700900001', parts: 1,
      reason: null, smscIds: [expect.any(String)], bind: expect.stringMatching(/^sim/),
    });
    for (const key of ['acceptedAt', 'sentAt', 'finalAt'] as const) expect(first[key]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(first.acceptedAt!)).toBeLessThanOrEqual(Date.parse(first.finalAt));
    expect(lines[2]?.reason).toMatch(/UNDELIV/);
    expect(lines[3]).toMatchObject({ reason: 'ESME_RINVDSTADR (0x0000000B)', smscIds: [null], sentAt: null });
  });

  it('SIGHUP after the file was renamed sends the next lines to a new file: none lost, none doubled across the two', async () => {
    const { folder } = await setUp('records.jsonl');
    const path = join(folder.dir, 'records.jsonl');
    const { child, port } = await started(folder.configPath);
    const ids: string[] = [];
    let sending = true;
    let n = 0;
    const load = (async () => {
      while (sending) ids.push(await send(port, `4477009${String(n++).padStart(5, '0')}`));
    })();
    await until(() => linesOf(path).length >= 20, 20_000, 'records before the rotation');
    renameSync(path, `${path}.1`);
    child.child.kill('SIGHUP');
    await child.next('records_reopened', 1);
    const sentAfter = ids.length;
    await until(() => linesOf(path).length >= 20, 20_000, 'records after the rotation');
    sending = false;
    await load;
    await until(() => linesOf(`${path}.1`).length + linesOf(path).length >= ids.length, 20_000, 'every record');

    const before = linesOf(`${path}.1`).map((l) => l.id);
    const after = linesOf(path).map((l) => l.id);
    expect([...before, ...after].sort()).toEqual([...ids].sort());
    // What was sent after the reopen was logged became final after it: in the new file.
    for (const id of ids.slice(sentAfter)) expect(after, id).toContain(id);
  });

  it('records committed but not yet written when the process is killed -9 are written by the next start', async () => {
    // The folder is missing, so every append fails and the records stay queued in the store.
    const { folder } = await setUp('out/records.jsonl');
    const path = join(folder.dir, 'out', 'records.jsonl');
    let { child, port } = await started(folder.configPath);
    const ids = [await send(port, '447700900011'), await send(port, '447700900012'), await send(port, '447700900013')];
    await until(() => storeView(folder.storePath).queued === 3, 20_000, 'three records queued');
    await child.next('records_write_failed', 1);
    child.child.kill('SIGKILL');
    await child.exited();
    expect(existsSync(path)).toBe(false);

    mkdirSync(join(folder.dir, 'out'));
    ({ child, port } = await started(folder.configPath));
    await until(() => linesOf(path).length >= 3 && storeView(folder.storePath).queued === 0, 20_000, 'the records written');
    expect(linesOf(path).map((l) => [l.id, l.status]).sort()).toEqual(ids.map((id) => [id, 'DELIVERED']).sort());
  });
});
