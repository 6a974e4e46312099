/** The store's queries under way, which `close` waits for before it ends the pool. */
export class Underway {
  readonly #promises = new Set<Promise<unknown>>();

  /** Keeps `done` until it settles; returns it. */
  track<T>(done: Promise<T>): Promise<T> {
    this.#promises.add(done);
    const forget = (): void => { this.#promises.delete(done); };
    done.then(forget, forget);
    return done;
  }

  /** Resolves once every query tracked now has settled, however. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#promises]);
  }
}
