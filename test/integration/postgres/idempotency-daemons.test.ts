/**
 * Idempotency-Key across two daemons sharing one PostgreSQL store: the same request sent to both
 * at once is stored once, and both answer its result; a sendbulk repeat on the other instance
 * waits for the first's upload to end and answers its response.
 */
import { afterEach, expect, it } from 'vitest';
import type { RunningDaemon } from '../../../src/cli/daemon.js';
import { SystemClock } from '../../../src/core/clock.js';
import { silentLog } from '../../../src/core/log.js';
import { SmscSimulator } from '../../../src/simulator/simulator.js';
import { bulkForm } from '../../support/http.js';
import { startPgDaemon } from './pg-daemon.js';
import { describePg, pgSchema } from './pg-store.js';

const TOKEN = 'pg-idem-token-0123456789';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describePg('Idempotency-Key on two daemons sharing PostgreSQL', () => {
  it('one key sent to both instances at once: stored once, both answer the same', async () => {
    const schema = await pgSchema();
    cleanups.push(() => schema.cleanup());
    const sim = new SmscSimulator({ host: '127.0.0.1', port: 0, accounts: [{ systemId: 'pg', password: 'pgpw' }] }, new SystemClock(), silentLog);
    const { port } = await sim.start();
    cleanups.push(() => sim.stop());
    const daemon = (instanceId: string): Promise<RunningDaemon> => startPgDaemon(cleanups, {
      schema: schema.name, instanceId, token: TOKEN, upstream: `{ name: sim, host: 127.0.0.1, port: ${port}, systemId: pg, password: pgpw }`,
    });
    const [a, b] = [await daemon('host-a'), await daemon('host-b')];
    const post = (d: RunningDaemon, path: string, key: string, body: { payload: Buffer; headers: Record<string, string> } | object) => {
      const multipart = 'payload' in body;
      return fetch(`http://127.0.0.1:${d.http.port}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'idempotency-key': key, ...(multipart ? (body as { headers: Record<string, string> }).headers : { 'content-type': 'application/json' }) },
        body: multipart ? (body as { payload: Buffer }).payload : JSON.stringify(body),
      });
    };
    const count = async (sql: string) => Number((await schema.sql<{ n: number }>(sql))[0]?.n);

    for (let round = 0; round < 5; round++) {
      const sms = { senderId: 'pg', destinationNumber: '447700900123', message: `round ${round}`, messageType: 'TEXT' };
      const answers = await Promise.all([post(a, '/sms/sendSms', `sms-${round}`, sms), post(b, '/sms/sendSms', `sms-${round}`, sms)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      const [idA, idB] = await Promise.all(answers.map((r) => r.text()));
      expect(idA).toBe(idB);
    }
    expect(await count('SELECT COUNT(*)::int AS n FROM messages')).toBe(5);

    // A file large enough for several chunks: the repeat on the other instance finds the key pending there, and waits.
    const numbers = Array.from({ length: 5_000 }, (_, i) => `4477${String(i).padStart(8, '0')}`).join('\n');
    const form = () => bulkForm({ senderId: 'pg', message: 'to all', messageType: 'TEXT' }, numbers);
    const uploads = await Promise.all([post(a, '/sms/sendbulk', 'bulk-1', form()), post(b, '/sms/sendbulk', 'bulk-1', form())]);
    expect(uploads.map((r) => r.status)).toEqual([200, 200]);
    const [bodyA, bodyB] = await Promise.all(uploads.map((r) => r.text()));
    expect(bodyA).toBe(bodyB);
    expect(JSON.parse(bodyA!)).toMatchObject({ status: 'success', bulkListInfo: { validCount: 5_000 } });
    expect(await count('SELECT COUNT(*)::int AS n FROM batches')).toBe(1);
    expect(await count('SELECT COUNT(*)::int AS n FROM messages')).toBe(5_005);
  }, 60_000);
});
