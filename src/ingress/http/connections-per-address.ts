/**
 * Open connections per remote address, for http.maxConnectionsPerAddress. An address has an entry
 * only while it has a connection open (its last one's close deletes it), so however many
 * addresses a flood comes from, the map never holds more entries than there are open connections.
 */
export class ConnectionsPerAddress {
  readonly #open = new Map<string, number>();
  readonly #max: number;

  /** `max` ≥ 1: the connections one address may hold open at once. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Counts a connection from `address` and returns true; false, not counted, when it already holds `max`. */
  open(address: string): boolean {
    const held = this.#open.get(address) ?? 0;
    if (held >= this.#max) return false;
    this.#open.set(address, held + 1);
    return true;
  }

  /** Uncounts a connection that `open` counted. */
  close(address: string): void {
    const held = this.#open.get(address);
    if (held === undefined) return;
    if (held <= 1) this.#open.delete(address);
    else this.#open.set(address, held - 1);
  }

  /** Addresses with at least one connection open. */
  get addresses(): number {
    return this.#open.size;
  }
}
