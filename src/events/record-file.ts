/**
 * The records file (`records.path`): JSON lines appended by the records writer, a batch at a time.
 * A batch is on disk (fdatasync) before `append` resolves, so a record dropped from the store's
 * queue after it is never lost, to a crash or a power cut. A write that fails (a full disk) leaves
 * no part of a line behind: the file is cut back to where the batch began, and the whole batch is
 * written again later. A file whose last line a crash cut short is continued on a new line.
 *
 * `reopen` (SIGHUP, after logrotate renamed the file) closes the file between two batches and
 * opens the path again, creating it when missing: a batch goes to one file, whole.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** Where the records writer appends its lines. */
export interface RecordSink {
  /** Where it writes (logged). */
  readonly path: string;
  /** Appends `text` (whole lines), on disk when it resolves; rejects with nothing of it left in the file. */
  append(text: string): Promise<void>;
  /** The next append opens the path again (the file was rotated). */
  reopen(): void;
  close(): Promise<void>;
}

const NEWLINE = 0x0a;

export class RecordFile implements RecordSink {
  readonly path: string;
  readonly #mode: number;
  #handle: FileHandle | undefined;
  /** The open file ends in the middle of a line: the next append starts a new one first. */
  #midLine = false;
  #reopen = false;
  #closed = false;
  /** Appends and close run one at a time, in order. */
  #chain: Promise<unknown> = Promise.resolve();

  /** `mode`: the permissions of a file it creates (before the process's umask). Default 0640. */
  constructor(path: string, mode = 0o640) {
    this.path = path;
    this.#mode = mode;
  }

  append(text: string): Promise<void> {
    return this.#serial(() => this.#append(text));
  }

  reopen(): void {
    this.#reopen = true;
  }

  close(): Promise<void> {
    return this.#serial(async () => {
      this.#closed = true;
      await this.#release();
    });
  }

  async #append(text: string): Promise<void> {
    if (this.#closed) throw new Error(`the records file ${this.path} is closed`);
    if (this.#reopen) {
      this.#reopen = false;
      await this.#release();
    }
    const handle = this.#handle ?? (this.#handle = await this.#open());
    let size: number | undefined;
    try {
      size = (await handle.stat()).size;
      await handle.appendFile(this.#midLine ? `\n${text}` : text, 'utf8');
      await handle.datasync();
      this.#midLine = false;
    } catch (e) {
      // Cut back what the failed write left; the file is opened afresh for the next try (it may
      // have been removed, or its file system remounted).
      if (size !== undefined) await handle.truncate(size).catch(() => undefined);
      await this.#release();
      throw e;
    }
  }

  async #open(): Promise<FileHandle> {
    // a+: appends always go to the end, and the last byte can be read.
    const handle = await open(this.path, 'a+', this.#mode);
    try {
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      this.#midLine = size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== NEWLINE;
      return handle;
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw e;
    }
  }

  async #release(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }
}
