/**
 * Writes the store's queue of message records (`MessageRecords`) to the records file: takes a
 * batch, appends its lines (on disk when the append resolves), and only then drops the batch from
 * the queue. A record is therefore written after the commit that made its message final, and
 * never lost: a crash before the drop writes it again at the next start (at least once: a line may
 * repeat, with the same `id`). A write that fails (a full disk) is logged, counted, and tried again
 * at the next poll with the records still queued; it never stops the daemon. A drop that fails is
 * tried again before the next take, so a passing store error does not write a batch twice.
 *
 * It lives beside the event dispatcher: both deliver a durable queue, written in the commit of the
 * change it tells of, to a sink, at least once.
 */
import type { Clock } from '../core/clock.js';
import type { Log } from '../core/log.js';
import { RepeatingTask } from '../core/repeating-task.js';
import type { WarningThrottle } from '../core/warning-throttle.js';
import type { MessageRecords } from '../store/message-records.js';
import type { RecordSink } from './record-file.js';
import { recordLines } from './record-line.js';

/** Records taken and written at once, at most: one append and one fsync per batch. */
export const RECORD_BATCH = 500;
/** How often the queue is looked at when nothing woke the writer. */
export const RECORD_POLL_MS = 1_000;

/** Counters of the writer (prom-client in the daemon). */
export interface RecordMetrics {
  recordsWritten(count: number): void;
  recordWriteFailed(): void;
}

export interface RecordWriterOptions {
  store: MessageRecords;
  file: RecordSink;
  clock: Clock;
  log: Log;
  /** Repeated failures are logged once per interval, counted. */
  warnings: WarningThrottle;
  metrics?: RecordMetrics;
  /** Default RECORD_BATCH. ≥ 1. */
  batch?: number;
  /** Default RECORD_POLL_MS. */
  pollMs?: number;
}

export class RecordWriter {
  readonly #o: RecordWriterOptions & { batch: number };
  readonly #task: RepeatingTask;
  /** A batch written to the file whose drop from the queue has not committed yet. */
  #written: number[] | undefined;
  #failing = false;

  constructor(o: RecordWriterOptions) {
    this.#o = { ...o, batch: Math.max(1, Math.floor(o.batch ?? RECORD_BATCH)) };
    this.#task = new RepeatingTask({
      clock: o.clock, everyMs: o.pollMs ?? RECORD_POLL_MS, run: () => this.#run(),
      onError: (e) => o.warnings.error(o.log, 'records_store_error', { event: 'store_error', err: e },
        'taking or dropping message records failed; trying again at the next poll'),
    });
  }

  start(): void {
    this.#task.start();
  }

  /** Looks at the queue now (after the run under way, if any). */
  wake(): void {
    this.#task.runNow();
  }

  /** SIGHUP after logrotate: the next batch goes to a file opened afresh at the path. */
  reopen(): void {
    this.#o.file.reopen();
    this.#o.log.info({ event: 'records_reopened' }, 'the records file is opened again at its path for the next records');
    this.wake();
  }

  /**
   * Stops polling and writes what is queued once more (the binds' last outcomes, committed during
   * the stop), then closes the file. Resolves when done; what could not be written stays queued.
   */
  async stop(): Promise<void> {
    await this.#task.stop();
    await this.#run().catch((e: unknown) => this.#o.log.error({ event: 'store_error', err: e }, 'writing the last message records failed; they stay queued'));
    await this.#o.file.close();
  }

  /** One run: batches until the queue is empty or a write fails. */
  async #run(): Promise<void> {
    const { store, file, clock, batch } = this.#o;
    if (this.#written) await this.#drop(this.#written);
    for (;;) {
      const records = await store.takeRecords(batch, clock.wallNow());
      if (records.length === 0) return;
      try {
        await file.append(recordLines(records));
      } catch (e) {
        this.#failed(e, records.length);
        return;
      }
      this.#o.metrics?.recordsWritten(records.length);
      if (this.#failing) {
        this.#failing = false;
        this.#o.log.info({ event: 'records_write_recovered' }, 'message records are written again');
      }
      await this.#drop(records.map((r) => r.seq));
      if (records.length < batch) return;
    }
  }

  async #drop(seqs: number[]): Promise<void> {
    this.#written = seqs;
    await this.#o.store.dropRecords(seqs);
    this.#written = undefined;
  }

  #failed(e: unknown, records: number): void {
    this.#failing = true;
    this.#o.metrics?.recordWriteFailed();
    const { log, warnings } = this.#o;
    warnings.error(log, 'records_write_failed', { event: 'records_write_failed', path: this.#o.file.path, records, err: e },
      'appending message records to the records file failed; they stay queued and are written again at the next poll');
  }
}
