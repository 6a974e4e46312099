import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { storeFolder, type StoreFolder } from '../../support/sqlite-store.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Runs test/support/store-child.ts, which accepts messages without end and prints the id of each
 * accept that resolved; kills it with SIGKILL once `atLeast` have been printed. Returns the
 * printed ids.
 */
function acceptUntilKilled(path: string, atLeast: number, fsync: boolean): Promise<string[]> {
  const child = spawn(process.execPath, ['--import', './test/support/ts-register.mjs', 'test/support/store-child.ts', path, fsync ? 'fsync' : ''], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'], // stdin held open: the child exits when it closes
  });
  const ids: string[] = [];
  let buffer = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const event = JSON.parse(line) as { event: string; id?: string; message?: string };
        if (event.event === 'accepted' && event.id !== undefined) ids.push(event.id);
        if (event.event === 'error') reject(new Error(`child: ${event.message}`));
      }
      if (ids.length >= atLeast && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    child.once('close', (code, signal) => {
      if (signal === 'SIGKILL') resolve(ids);
      else reject(new Error(`child exited with ${code}; stderr: ${stderr}`));
    });
  });
}

describe('SqliteStore durability', () => {
  let folder: StoreFolder;
  afterEach(async () => folder.cleanup());

  for (const fsync of [false, true]) {
    it(`every accept whose promise resolved survives kill -9 (synchronous ${fsync ? 'FULL' : 'NORMAL'})`, async () => {
      folder = storeFolder();
      const printed = await acceptUntilKilled(folder.path, 2_000, fsync);
      expect(printed.length).toBeGreaterThanOrEqual(2_000);

      const store = await folder.open();
      const missing: string[] = [];
      for (const id of printed) {
        const m = await store.getMessage(id);
        if (m === undefined || m.status !== 'SUBMITTED' || m.parts.length === 0) missing.push(id);
      }
      expect(missing).toEqual([]);
      const db = folder.inspect();
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      // no message is stored without all its parts (one transaction per group)
      const partless = db.prepare('SELECT COUNT(*) AS n FROM messages m WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.message_id = m.id)').get();
      expect(partless).toEqual({ n: 0 });
    });
  }
});
