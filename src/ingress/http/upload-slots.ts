/**
 * The sendbulk uploads in progress. Each holds the valid numbers of its file in memory until
 * they are counted and stored (up to 16 bytes × `http.maxBulkNumbers`), and a connection is all
 * an upload needs: without a cap, `http.maxConnections` uploads at once could hold 1,000 × 16 MB.
 * With it, uploads hold at most `http.maxConcurrentUploads` × `http.maxBulkNumbers` × 16 bytes
 * (256 MB by default), whatever the number of connections. One client may hold at most half the
 * slots (at least one), so another client's upload still finds one free.
 */
import { ApiError } from '../../api/errors.js';

/**
 * Retry-After of a refusal, seconds. A slot is free when an upload ends, and nothing says when
 * that will be: an upload holds its slot while its file arrives, is counted and is stored, from
 * about a second for ten thousand numbers to a minute or more for a million. Five seconds is
 * about what a mid-sized upload takes: a retry seldom meets the same uploads still in progress,
 * and a client whose slot frees sooner waits a few seconds at most.
 */
export const UPLOAD_RETRY_AFTER_S = 5;

export class UploadSlots {
  /** Slots one client may hold: half of `max`, at least 1. */
  readonly perClient: number;
  #inProgress = 0;
  readonly #byClient = new Map<string, number>();

  /** @param max Uploads in progress at once, all clients (`http.maxConcurrentUploads`, ≥ 1). */
  constructor(readonly max: number) {
    this.perClient = Math.max(1, Math.floor(max / 2));
  }

  /** Uploads in progress now. */
  get inProgress(): number {
    return this.#inProgress;
  }

  /**
   * Takes a slot for one of `client`'s uploads, or throws TOO_MANY_UPLOADS (429, Retry-After).
   * Returns the slot's release, to be called however the upload ends; calls after the first do
   * nothing.
   */
  take(client: string): () => void {
    const held = this.#byClient.get(client) ?? 0;
    const retry = { 'retry-after': String(UPLOAD_RETRY_AFTER_S) };
    if (held >= this.perClient) {
      throw new ApiError('TOO_MANY_UPLOADS', `this client has ${uploads(held)} in progress, the most one client may have `
        + `(half of http.maxConcurrentUploads, at least 1); retry after ${UPLOAD_RETRY_AFTER_S} s`, retry);
    }
    if (this.#inProgress >= this.max) {
      throw new ApiError('TOO_MANY_UPLOADS', `${uploads(this.#inProgress)} ${this.#inProgress === 1 ? 'is' : 'are'} in progress, the most at once (http.maxConcurrentUploads); `
        + `retry after ${UPLOAD_RETRY_AFTER_S} s`, retry);
    }
    this.#inProgress++;
    this.#byClient.set(client, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inProgress--;
      const left = (this.#byClient.get(client) ?? 1) - 1;
      if (left === 0) this.#byClient.delete(client);
      else this.#byClient.set(client, left);
    };
  }
}

/** `1 sendbulk upload`, `2 sendbulk uploads`. */
function uploads(n: number): string {
  return `${n} sendbulk upload${n === 1 ? '' : 's'}`;
}
