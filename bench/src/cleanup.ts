/**
 * What an interrupted benchmark must not leave behind. A case lists each thing it creates (a
 * PostgreSQL schema, RabbitMQ queues, a child process, a folder) as soon as it exists and, at its
 * normal end, removes them through the handles it got; on SIGINT or SIGTERM `cleanUpOnSignal`
 * runs whatever is still listed, newest first, and exits. Each clean-up runs once, whoever asks
 * first, and the others wait for that one run.
 */
import { constants } from 'node:os';

/** Runs one clean-up (once, however often called) and resolves to the problems it had ([] when none); never rejects. */
export type Cleanup = () => Promise<string[]>;

interface Entry {
  what: string;
  run: Cleanup;
}

export class BenchCleanup {
  readonly #listed: Entry[] = [];
  #all: Promise<string[]> | undefined;

  /** True once `runAll` has begun: what is added from then on is removed at once. */
  get closed(): boolean {
    return this.#all !== undefined;
  }

  /**
   * Lists `remove` under `what` until it has run. What it returns, when a string or strings, are
   * problems it reports (e.g. "could not drop schema …"); a throw is one too.
   */
  add(what: string, remove: () => unknown): Cleanup {
    let ran: Promise<string[]> | undefined;
    const entry: Entry = {
      what,
      run: () => {
        ran ??= (async () => {
          try {
            return problemsIn(await remove());
          } catch (e) {
            return [`could not remove ${what}: ${e instanceof Error ? e.message : String(e)}`];
          } finally {
            // Off the list once done (not when begun), so that `runAll` waits for one under way.
            const at = this.#listed.indexOf(entry);
            if (at >= 0) this.#listed.splice(at, 1);
          }
        })();
        return ran;
      },
    };
    this.#listed.push(entry);
    if (this.closed) void entry.run();
    return entry.run;
  }

  /** Runs every clean-up still listed, newest first, one at a time, past any that fails; only the first call runs them. */
  runAll(): Promise<string[]> {
    this.#all ??= (async () => {
      const problems: string[] = [];
      for (let next = this.#listed.at(-1); next; next = this.#listed.at(-1)) problems.push(...await next.run());
      return problems;
    })();
    return this.#all;
  }
}

function problemsIn(result: unknown): string[] {
  if (typeof result === 'string') return [result];
  return Array.isArray(result) ? result.filter((p): p is string => typeof p === 'string') : [];
}

/** Where the signals come from: the process, or an emitter in a test. */
export interface SignalSource {
  on(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown;
}

/**
 * On the first SIGINT or SIGTERM, runs `cleanup.runAll()` and then calls `exit` with one line and
 * 128 + the signal's number. A second signal while it runs is ignored, so that a repeated Ctrl-C
 * does not cut the clean-up short. Returns a function that stops listening.
 */
export function cleanUpOnSignal(cleanup: BenchCleanup, exit: (line: string, code: number) => void, source: SignalSource = process): () => void {
  let caught = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (caught) return;
    caught = true;
    void cleanup.runAll().then((problems) => {
      const outcome = problems.length === 0
        ? 'removed the schemas, queues, processes and folders it had created'
        : `could not remove everything: ${problems.join('; ').replace(/\s+/g, ' ')}`;
      exit(`bench: interrupted by ${signal}; ${outcome}`, 128 + (constants.signals[signal] ?? 0));
    });
  };
  source.on('SIGINT', onSignal);
  source.on('SIGTERM', onSignal);
  return () => {
    source.off('SIGINT', onSignal);
    source.off('SIGTERM', onSignal);
  };
}
