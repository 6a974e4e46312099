import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** One line of a child's stdout, parsed; every line carries an `event`. */
export type JsonEvent = { event: string } & Record<string, unknown>;

/**
 * A child process that reports on stdout, one JSON object per line (the interop peers in
 * test/interop/). Tests wait on events, never on time: `next` resolves when a matching line
 * arrives (or has arrived), and rejects when the process exits first or `ms` pass.
 */
export class JsonLinesProcess {
  readonly events: JsonEvent[] = [];
  readonly child: ChildProcessWithoutNullStreams;
  #stderr = '';
  #buffer = '';
  #waiters = new Set<() => void>();
  #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #exited = false;

  /** `env`: the child's environment (default: this process's). */
  constructor(command: string, args: string[], env?: NodeJS.ProcessEnv) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(env ? { env } : {}) });
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.#onStdout(chunk));
    this.child.stderr.on('data', (chunk: string) => { this.#stderr += chunk; });
    this.#exit = new Promise((resolve) => {
      this.child.once('close', (code, signal) => {
        this.#exited = true;
        this.#wake();
        resolve({ code, signal });
      });
      this.child.once('error', (e) => {
        this.#stderr += `spawn failed: ${e.message}\n`;
        this.#exited = true;
        this.#wake();
        resolve({ code: null, signal: null });
      });
    });
  }

  /** Everything the child wrote to stderr so far (for failure messages). */
  get stderr(): string {
    return this.#stderr;
  }

  /** Resolves with the exit status once stdout is closed and the process has exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    return this.#exit;
  }

  /** Every event named `event` so far. */
  all(event: string): JsonEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  /** Waits until `count` events named `event` (and matching `match`) have arrived; resolves with them. */
  async next(event: string, count = 1, ms = 15_000, match: (e: JsonEvent) => boolean = () => true): Promise<JsonEvent[]> {
    const found = () => this.all(event).filter(match);
    if (found().length >= count) return found().slice(0, count);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => fail(`timed out after ${ms} ms`), ms);
      const fail = (why: string) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        reject(new Error(`${why} waiting for ${count} '${event}' event(s) from the child; saw ${JSON.stringify(this.events)}; stderr: ${this.#stderr}`));
      };
      const check = () => {
        const hits = found();
        if (hits.length >= count) {
          clearTimeout(timer);
          this.#waiters.delete(check);
          resolve(hits.slice(0, count));
        } else if (this.#exited) {
          fail('the child exited');
        }
      };
      this.#waiters.add(check);
    });
  }

  /** Kills the child if it is still running (SIGKILL: it may be blocked in a read). */
  kill(): void {
    if (!this.#exited && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  #onStdout(chunk: string): void {
    this.#buffer += chunk;
    let nl: number;
    while ((nl = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, nl).trim();
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line === '') continue;
      try {
        this.events.push(JSON.parse(line) as JsonEvent);
      } catch {
        this.events.push({ event: 'unparsed', line });
      }
    }
    this.#wake();
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }
}
