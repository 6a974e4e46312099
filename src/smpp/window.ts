/**
 * The requests one session has outstanding, keyed by sequence number (cloudhopper's window:
 * offer, complete, expire). Counted from write to response. Entries are kept in send order and
 * share one timeout, so the oldest entry always expires first and one sweep per window suffices.
 * Pure: time is an argument; the session owns the single sweep timer.
 */
export interface WindowEntry<T> {
  sequenceNumber: number;
  sentAt: number;
  expiresAt: number;
  value: T;
}

export class Window<T> {
  #entries = new Map<number, WindowEntry<T>>();

  /**
   * @param size Maximum outstanding requests (the provider allows 100). Must be ≥ 1.
   * @param timeoutMs How long a request waits for its response before its outcome is uncertain.
   */
  constructor(readonly size: number, readonly timeoutMs: number) {}

  get outstanding(): number {
    return this.#entries.size;
  }

  get free(): number {
    return this.size - this.#entries.size;
  }

  /** Adds a request sent at `now`. Returns false (and adds nothing) when the window is full. */
  offer(sequenceNumber: number, value: T, now: number): boolean {
    if (this.#entries.size >= this.size || this.#entries.has(sequenceNumber)) return false;
    this.#entries.set(sequenceNumber, { sequenceNumber, sentAt: now, expiresAt: now + this.timeoutMs, value });
    return true;
  }

  /** Removes and returns the request a response answers, or undefined when none is outstanding. */
  complete(sequenceNumber: number): WindowEntry<T> | undefined {
    const entry = this.#entries.get(sequenceNumber);
    if (entry) this.#entries.delete(sequenceNumber);
    return entry;
  }

  /** Removes and returns every request whose deadline is at or before `now`, oldest first. */
  expire(now: number): WindowEntry<T>[] {
    const expired: WindowEntry<T>[] = [];
    for (const entry of this.#entries.values()) {
      if (entry.expiresAt > now) break;
      expired.push(entry);
    }
    for (const entry of expired) this.#entries.delete(entry.sequenceNumber);
    return expired;
  }

  /** The earliest deadline, or undefined when empty. */
  nextExpiry(): number | undefined {
    for (const entry of this.#entries.values()) return entry.expiresAt;
    return undefined;
  }

  /** Removes and returns everything (the connection is gone). */
  clear(): WindowEntry<T>[] {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    return all;
  }
}
