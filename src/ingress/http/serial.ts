/**
 * Runs the operations on one key one after another. A batch or schedule change reads the state,
 * checks the transition and writes the new state; two requests on the same batch at once (a
 * resume racing an abort) must not both pass the check, or an aborted batch could come back.
 * The store has no compare-and-set, and one smppd serves one store, so order them here.
 */
export class KeyedSerial {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.catch(() => undefined);
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
