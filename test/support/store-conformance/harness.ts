/**
 * What the store conformance scenarios (this folder) need of a store implementation: a fresh,
 * empty store per test and the few things they read around it. Each implementation's test file
 * gives a `StoreFactory`; everything that differs between SQLite and PostgreSQL lives there.
 */
import { afterEach, beforeEach } from 'vitest';
import { SystemClock, type Clock, type TimerHandle } from '../../../src/core/clock.js';
import type { Store } from '../../../src/store/store.js';

/** Rows of a query run on the store's database through a connection of its own (an operator's shell); parameters are $1, $2, … */
export type Rows = <R = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<R[]>;

/**
 * A clock with real timers (the SQLite store's group commit waits on them) and a wall time the
 * test sets: the time a store reads when it opens, to give back the outbox leases of the run before.
 */
export class WallClockAt implements Clock {
  readonly #system = new SystemClock();
  constructor(public wall = 0) {}
  now(): number { return this.#system.now(); }
  wallNow(): number { return this.wall; }
  setTimer(ms: number, fn: () => void): TimerHandle { return this.#system.setTimer(ms, fn); }
}

/** A store as the scenarios hold it: the `Store` and its count of commits. */
export type StoreWithStats = Store & { readonly stats: { readonly commits: number } };

/** What a scenario may ask of the store it opens, beside the defaults. */
export interface StoreOpenOptions {
  /** Queue the records of messages that become final (`MessageRecords`). Default false. */
  records?: boolean;
}

/** One implementation's side of the scenarios: an empty database per test and the ways to look into it. */
export interface StoreHarness {
  clock: WallClockAt;
  /** Opens a store on this harness's database with `clock`: on the same data each time, as a restart of the same process (or instance). */
  open(options?: StoreOpenOptions): Promise<StoreWithStats>;
  rows: Rows;
  /** The text of the event claim's query (the store's own constant). */
  claimEventsSql: string;
  /** The query plan of a claim of `client`'s due pending events at `now`, with the index on them preferred. */
  dueEventsPlan(client: string, now: number): Promise<string>;
  /** Closes every store it opened and removes the database. */
  close(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreHarness>;

/** A harness and its open store, fresh for every test of the calling `describe`: read the fields inside tests, after `beforeEach` ran. */
export interface StoreUnderTest extends Omit<StoreHarness, 'open' | 'close'> {
  store: StoreWithStats;
  /** Closes `store` and opens the same data again: `store` is the new one. */
  reopen(): Promise<void>;
}

/** `options`: how every store of the test is opened (the first and each `reopen`). */
export function storePerTest(factory: StoreFactory, options: StoreOpenOptions = {}): StoreUnderTest {
  let harness: StoreHarness | undefined;
  const t = {} as StoreUnderTest;
  beforeEach(async () => {
    const h = await factory();
    harness = h;
    Object.assign(t, {
      store: await h.open(options),
      clock: h.clock,
      rows: h.rows,
      claimEventsSql: h.claimEventsSql,
      dueEventsPlan: (client: string, now: number) => h.dueEventsPlan(client, now),
      reopen: async () => {
        await t.store.close();
        t.store = await h.open(options);
      },
    });
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });
  return t;
}

export type StatusEvent = Record<string, unknown> & { status: string };

/** Outbox rows of kind 'status' with their payload parsed, oldest first. */
export async function statusEvents(rows: Rows, messageId?: string): Promise<StatusEvent[]> {
  const found = messageId === undefined
    ? await rows<{ payload: string }>("SELECT payload FROM outbox WHERE kind = 'status' ORDER BY id")
    : await rows<{ payload: string }>("SELECT payload FROM outbox WHERE kind = 'status' AND message_id = $1 ORDER BY id", [messageId]);
  return found.map((r) => JSON.parse(r.payload) as StatusEvent);
}

/** `statusEvents` after acceptance: the changes that submit outcomes, receipts and local decisions made (SUBMITTED is the accept tests' to check). */
export async function changeEvents(rows: Rows, messageId?: string): Promise<StatusEvent[]> {
  return (await statusEvents(rows, messageId)).filter((e) => e.status !== 'SUBMITTED');
}
