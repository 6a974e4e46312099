/**
 * The queue of work waiting for a bind: a deque (retries and next parts go to the front, so a
 * message's parts stay together and in order) plus a delayed set released by one timer.
 * Entries can be withdrawn (a late response settled them) without a scan: each enqueue gets a
 * ticket, and a withdrawn ticket is skipped when it reaches the head.
 */
export interface Queued {
  /** The ticket of the job's current queue entry; 0 when not queued. */
  ticket: number;
}

interface Entry<T> {
  job: T;
  ticket: number;
}

export class JobQueue<T extends Queued> {
  #front: Entry<T>[] = [];
  #back: Entry<T>[] = [];
  #head = 0;
  #delayed: Array<Entry<T> & { at: number }> = [];
  #ticket = 0;
  #live = 0;

  /** Jobs queued, ready or delayed. */
  get size(): number {
    return this.#live;
  }

  get readyCount(): number {
    return this.#front.length + this.#back.length - this.#head;
  }

  pushBack(job: T): void {
    this.#back.push({ job, ticket: this.#issue(job) });
  }

  pushFront(job: T): void {
    this.#front.push({ job, ticket: this.#issue(job) });
  }

  /** Queues `job` to become ready at `at` (monotonic ms). */
  pushDelayed(job: T, at: number): void {
    const entry = { job, ticket: this.#issue(job), at };
    let i = this.#delayed.length;
    while (i > 0 && this.#delayed[i - 1]!.at > at) i--;
    this.#delayed.splice(i, 0, entry);
  }

  /** The next ready job, without removing it. */
  peek(): T | undefined {
    for (;;) {
      const entry = this.#front.length > 0 ? this.#front[this.#front.length - 1] : this.#back[this.#head];
      if (!entry) return undefined;
      if (entry.job.ticket === entry.ticket) return entry.job;
      this.#dropHead();
    }
  }

  /** Removes the job `peek` returned. */
  shift(): T | undefined {
    const job = this.peek();
    if (!job) return undefined;
    this.#dropHead();
    job.ticket = 0;
    this.#live--;
    return job;
  }

  /** Withdraws a queued job (ready or delayed). */
  withdraw(job: T): void {
    if (job.ticket === 0) return;
    job.ticket = 0;
    this.#live--;
  }

  /** Moves delayed jobs due at `now` to the front (in due order). Returns the next due time, if any. */
  release(now: number): number | undefined {
    let n = 0;
    while (n < this.#delayed.length && this.#delayed[n]!.at <= now) n++;
    const due = this.#delayed.splice(0, n);
    for (let i = due.length - 1; i >= 0; i--) {
      const e = due[i]!;
      if (e.job.ticket === e.ticket) this.#front.push({ job: e.job, ticket: e.ticket });
    }
    while (this.#delayed.length > 0 && this.#delayed[0]!.job.ticket !== this.#delayed[0]!.ticket) this.#delayed.shift();
    return this.#delayed[0]?.at;
  }

  /** Every queued job (ready or delayed), without removing any. */
  queued(): T[] {
    const live = (e: Entry<T>): boolean => e.job.ticket === e.ticket;
    return [...this.#front.filter(live), ...this.#back.slice(this.#head).filter(live), ...this.#delayed.filter(live)].map((e) => e.job);
  }

  /** Removes and returns every queued job. */
  drainAll(): T[] {
    const all: T[] = [];
    for (;;) {
      const job = this.shift();
      if (!job) break;
      all.push(job);
    }
    for (const e of this.#delayed) {
      if (e.job.ticket === e.ticket) {
        e.job.ticket = 0;
        this.#live--;
        all.push(e.job);
      }
    }
    this.#delayed = [];
    return all;
  }

  #issue(job: T): number {
    if (job.ticket !== 0) throw new Error('job is already queued');
    this.#live++;
    job.ticket = ++this.#ticket;
    return job.ticket;
  }

  #dropHead(): void {
    if (this.#front.length > 0) {
      this.#front.pop();
      return;
    }
    this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#back.length) {
      this.#back = this.#back.slice(this.#head);
      this.#head = 0;
    }
  }
}
