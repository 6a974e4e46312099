/**
 * Regression: better-sqlite3 12 derives its Database and Statement from node::ObjectWrap, whose
 * code the addon takes from Node.js's headers when it is compiled. Compiled against the headers
 * of Node.js 24.19 or later, the destructor of such an object aborts the whole process
 * ("Assertion failed: (env) != nullptr" in node::RemoveEnvironmentCleanupHook) when V8 collects
 * it outside JavaScript (nodejs/node#65446). The store prepares its statements once, but
 * `pragma()` and the migrations leave some to be collected, and the tests open and drop hundreds
 * of connections: on such a binding, test workers died without a word. Here the binding this
 * checkout was built with goes through the collections that abort it, in a child process, so
 * that a wrong build fails by name. The released binaries, the Docker image's build (Node.js
 * 24.18.1) and the Node 24 run of `.ci/run` (24.18.1's headers) are not affected.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** Connections whose statements are left to the collector, among enough garbage for it to run often. */
const CHURN = `
const Database = require('better-sqlite3');
let garbage = [];
let rounds = 0;
const timer = setInterval(() => {
  const db = new Database(':memory:');
  for (let i = 0; i < 200; i++) db.prepare('SELECT ?').get(i);
  db.close();
  for (let i = 0; i < 100000; i++) garbage.push({ i });
  if (garbage.length > 1000000) garbage = [];
  if (++rounds === 40) clearInterval(timer);
}, 1);
`;

function run(script: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('the better-sqlite3 binding under garbage collection', () => {
  it('survives the collection of statements and connections it no longer uses', async () => {
    const { code, signal, stderr } = await run(CHURN);
    const said = stderr.split('\n').map((line) => line.trim()).filter(Boolean).slice(0, 2).join(' ');
    expect({ code, signal }, `node ${process.version}: ${said}`).toEqual({ code: 0, signal: null });
  }, 60_000);
});
