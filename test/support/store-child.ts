/**
 * A child process for the durability test: opens the store at argv[2] and accepts messages
 * without end, `concurrency` at a time, printing one JSON line per accept that resolved
 * ({"event":"accepted","id":...}), until it is killed. stdout is a pipe, which Node writes
 * synchronously on Linux: a printed id was resolved before the line left the process.
 * Run with: node --import ./test/support/ts-register.mjs test/support/store-child.ts <path> [fsync]
 */
import { SystemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { newMessage } from './sqlite-store.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: store-child.ts <path> [fsync]');
const fsync = process.argv[3] === 'fsync';
const clock = new SystemClock();
const store = await SqliteStore.open({ path, fsync, clock });
process.stdout.write(`${JSON.stringify({ event: 'open' })}\n`);

const concurrency = 50;
let next = 0;
function acceptOne(): void {
  const id = `m${next++}`;
  store.accept({ messages: [newMessage(id, { partCount: 1 + (next % 3) })], now: clock.wallNow() }).then(
    () => {
      process.stdout.write(`${JSON.stringify({ event: 'accepted', id })}\n`);
      acceptOne();
    },
    (e: unknown) => {
      process.stdout.write(`${JSON.stringify({ event: 'error', id, message: String(e) })}\n`);
    },
  );
}
// The parent holds our stdin: when it goes away (a killed test run), so do we, instead of
// filling the disk as an orphan.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
for (let i = 0; i < concurrency; i++) acceptOne();
