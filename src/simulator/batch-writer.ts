import type { Socket } from 'node:net';

/**
 * Collects everything a connection produces in one turn of the event loop (the answers to one
 * read, or what one timer released) and writes it as one socket write. When the peer stops
 * reading, reading from it stops too until the socket drains: backpressure, not unbounded buffers.
 */
export class BatchWriter {
  #out: Buffer[] = [];
  #queued = false;
  #closed = false;
  #paused = false;
  #endAfterFlush = false;

  /** `onFlush` runs just before the batch is handed to the socket. */
  constructor(private readonly socket: Socket, private readonly onFlush: () => void) {}

  /** True once `endAfterFlush` was called: the link is closing after what is queued. */
  get ending(): boolean {
    return this.#endAfterFlush;
  }

  write(bytes: Buffer): void {
    if (this.#closed) return;
    this.#out.push(bytes);
    if (!this.#queued) {
      this.#queued = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /** Ends the socket once the current batch is written (unbind_resp, then close). */
  endAfterFlush(): void {
    this.#endAfterFlush = true;
  }

  /** Drops whatever is queued and writes nothing more. */
  close(): void {
    this.#closed = true;
    this.#out = [];
  }

  #flush(): void {
    this.#queued = false;
    if (this.#closed || this.#out.length === 0) return;
    const out = this.#out;
    this.#out = [];
    this.onFlush();
    const ok = this.socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    if (this.#endAfterFlush) {
      this.socket.end();
    } else if (!ok && !this.#paused) {
      this.#paused = true;
      this.socket.pause();
      this.socket.once('drain', () => {
        this.#paused = false;
        if (!this.#closed) this.socket.resume();
      });
    }
  }
}
