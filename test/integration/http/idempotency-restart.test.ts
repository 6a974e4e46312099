/**
 * Idempotency-Key across a restart: the daemon (SQLite store) stops between a request and its
 * repeat; the daemon started again on the same file answers the repeat what the first was
 * answered, and stores nothing again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../../src/cli/daemon.js';
import { parseConfig } from '../../../src/config/load.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { freePort } from '../../support/free-port.js';
import { bulkForm } from '../../support/http.js';

const TOKEN = 'idempotency-restart-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(dir: string): Promise<RunningDaemon> {
  const smscPort = await freePort();
  const config = await parseConfig([
    'log: { level: silent }',
    'http: { listen: "127.0.0.1:0" }',
    `clients: [{ name: app, token: ${TOKEN} }]`,
    'store: { path: smppd.db }',
    `simulator: { enabled: true, port: ${smscPort}, systemId: demo, password: demopw }`,
    `upstreams: [{ name: sim, host: 127.0.0.1, port: ${smscPort}, systemId: demo, password: demopw }]`,
    '',
  ].join('\n'), dir);
  return startDaemon(config, { clock: new SystemClock(), log: silentLog });
}

function post(d: RunningDaemon, path: string, key: string, body: { payload: Buffer; headers: Record<string, string> } | object): Promise<Response> {
  const multipart = 'payload' in body;
  return fetch(`http://127.0.0.1:${d.http.port}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`, 'idempotency-key': key,
      ...(multipart ? (body as { headers: Record<string, string> }).headers : { 'content-type': 'application/json' }),
    },
    body: multipart ? (body as { payload: Buffer }).payload : JSON.stringify(body),
  });
}

it('a repeat after a restart is answered what the first was: the same message id, the same sendbulk response', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'smppd-idem-restart-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const sms = { senderId: 'smppd', destinationNumber: '447700900123', message: 'once', messageType: 'TEXT' };
  const bulk = () => bulkForm({ senderId: 'smppd', message: 'once each', messageType: 'TEXT' }, '447700900001\n447700900002\n');

  const first = await start(dir);
  const sent = await post(first, '/sms/sendSms', 'sms-1', sms);
  expect(sent.status).toBe(200);
  const messageId = await sent.text();
  const uploaded = await post(first, '/sms/sendbulk', 'bulk-1', bulk());
  expect(uploaded.status).toBe(200);
  const response = await uploaded.text();
  await first.stop();

  const second = await start(dir);
  const again = await post(second, '/sms/sendSms', 'sms-1', sms);
  expect(again.status).toBe(200);
  expect(await again.text()).toBe(messageId);
  const reuploaded = await post(second, '/sms/sendbulk', 'bulk-1', bulk());
  expect(reuploaded.status).toBe(200);
  expect(await reuploaded.text()).toBe(response);
  const reused = await post(second, '/sms/sendSms', 'sms-1', { ...sms, message: 'twice' });
  expect(reused.status).toBe(422);
  expect(((await reused.json()) as { errorCode: string }).errorCode).toBe('IDEMPOTENCY_KEY_REUSED');
  // One message and one batch of two: nothing stored again.
  const list = (await (await fetch(`http://127.0.0.1:${second.http.port}/sms/list`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Array<{ total: number }>;
  expect(list.map((b) => b.total)).toEqual([2]);
  await second.stop();
  const db = new Database(join(dir, 'smppd.db'), { readonly: true });
  try {
    expect(db.prepare('SELECT COUNT(*) AS n FROM messages').get()).toEqual({ n: 3 });
    expect(db.prepare("SELECT key, state FROM idempotency_keys ORDER BY key").all()).toEqual([{ key: 'bulk-1', state: 'done' }, { key: 'sms-1', state: 'done' }]);
  } finally {
    db.close();
  }
}, 30_000);
