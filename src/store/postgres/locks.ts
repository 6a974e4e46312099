/**
 * The advisory locks of the PostgreSQL store. Row locks serialize what touches the same rows;
 * these serialize what touches rows that may not exist yet:
 *
 * - a receipt key: the receipt that finds no part and parks, and the submit outcome that gives a
 *   part that key and looks for parked receipts, run one after the other, so a receipt parked on
 *   one instance while the submit lands on another is matched exactly once;
 * - a batch's gate: its state changes, its schedule's, and the messages appended to it, so no
 *   message joins a batch between its abort and the failing of its queued parts. A transaction
 *   that takes several gates (a schedules' release, a failover's move) takes them in batch id
 *   order, which is the order of their keys (ids stay far below 2^31 - 1), so no two wait on each
 *   other; one that takes a single gate takes it before any row lock of its own, and the
 *   retention sweep only tries gates (it never waits for one);
 * - a concatenated MO message: each of its parts, and the sweep that stores it incomplete, so the
 *   part that completes it sees every other part, whichever instance's bind each came in on;
 * - an instance: held by the running smppd with that `instanceId` for as long as it is connected;
 *   a part inflight under a claim whose instance holds no lock was left by a process that is gone
 *   (once its lease has ended too: the lock also goes with a connection that broke under a live one).
 *
 * Each lock space is named after the schema, so stores on other schemas of the database never wait
 * on each other. Keys are 32-bit hashes: a collision only makes two unrelated things wait in turn.
 */
import pg from 'pg';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import { TYPES, type Queryable, type Tx } from './db.js';

export interface LockSpaces {
  receipt: string;
  batch: string;
  instance: string;
  inbound: string;
}

export function lockSpaces(schema: string): LockSpaces {
  return {
    receipt: `smppd.receipt:${schema}`, batch: `smppd.batch:${schema}`, instance: `smppd.instance:${schema}`, inbound: `smppd.inbound:${schema}`,
  };
}

/**
 * A statement that takes the locks of receipt keys until the end of the transaction, in the
 * order of their hashes (so two key sets never deadlock), and yields how many it took:
 * `space` names the receipt lock space, `pairs` is a FROM item `u` with columns upstream and key.
 */
export function receiptKeyLocksSql(space: string, pairs: string): string {
  return `SELECT count(pg_advisory_xact_lock(hashtext(${space}), s.h)) AS locked FROM (
    SELECT DISTINCT hashtext(u.upstream || chr(31) || u.key) AS h FROM ${pairs} ORDER BY 1) AS s`;
}

/** Takes the gate of a batch until the end of the transaction. Several gates: in batch id order (above). */
export async function lockBatchGate(tx: Tx, spaces: LockSpaces, batchId: number): Promise<void> {
  await tx.run('SELECT pg_advisory_xact_lock(hashtext($1), ($2::bigint % 2147483647)::int)', [spaces.batch, batchId]);
}

/**
 * The hashes of the instances that are connected now (hold their instance lock), as a subquery
 * for `hashtext(claimed_by)::oid NOT IN (...)`; `$n` is the instance lock space.
 */
export function liveInstancesSql(param: number): string {
  return `SELECT l.objid FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = hashtext($${param})::oid
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
}

/** How many instances are connected to the schema now (each holds its instance lock): at least 1, this one. */
export async function countLiveInstances(db: Queryable, spaces: LockSpaces): Promise<number> {
  const row = await db.row<{ n: string }>(`SELECT count(*) AS n FROM (${liveInstancesSql(1)}) AS live`, [spaces.instance]);
  return Math.max(1, Number(row?.n ?? 1));
}

/**
 * The server's TCP keepalive on the lock's session (seconds, as the settings take them): a host
 * that vanishes without closing its connection (power lost, a network cut) is noticed by the
 * server, which ends the session and frees the lock, within about half the lease (at least 4 s:
 * idle, then 3 probes), instead of the operating system's default of over two hours. A process
 * that dies on a live host closes its socket, and the lock goes at once.
 */
export function lockKeepalives(leaseMs: number): { idle: number; interval: number; count: number } {
  const seconds = leaseMs / 1000;
  return { idle: Math.max(1, Math.floor(seconds / 4)), interval: Math.max(1, Math.floor(seconds / 12)), count: 3 };
}

/**
 * The lock that says "the instance `instanceId` is running": a session-level advisory lock held
 * on a connection of its own for the store's lifetime. A second smppd started with the same id
 * is refused (it would recover the first one's inflight parts as its own). When the connection
 * is lost, the lock goes with it; `ensure` takes it again before the next claim or lease renewal.
 */
export class InstanceLock {
  readonly #config: pg.ClientConfig;
  readonly #space: string;
  readonly #instanceId: string;
  readonly #keepalives: ReturnType<typeof lockKeepalives>;
  #client: pg.Client | undefined;
  /** The attempt under way: concurrent callers share it (two attempts would each open a session, and the second find the lock taken by the first). */
  #taking: Promise<void> | undefined;
  #closed = false;

  private constructor(config: pg.ClientConfig, space: string, instanceId: string, leaseMs: number) {
    this.#config = config;
    this.#space = space;
    this.#instanceId = instanceId;
    this.#keepalives = lockKeepalives(leaseMs);
  }

  static async acquire(config: pg.ClientConfig, spaces: LockSpaces, instanceId: string, leaseMs: number): Promise<InstanceLock> {
    const lock = new InstanceLock(config, spaces.instance, instanceId, leaseMs);
    await lock.ensure();
    return lock;
  }

  /** Whether the lock is held now (its session is up). */
  get held(): boolean {
    return this.#client !== undefined;
  }

  /** Takes the lock again if its connection was lost; throws when another process holds it. */
  ensure(): Promise<void> {
    if (this.#client !== undefined || this.#closed) return Promise.resolve();
    this.#taking ??= this.#take().finally(() => { this.#taking = undefined; });
    return this.#taking;
  }

  async #take(): Promise<void> {
    const client = new pg.Client({ ...this.#config, types: TYPES });
    // A lost connection is noticed here and at the next claim, never thrown at the event loop.
    client.on('error', () => { if (this.#client === client) this.#client = undefined; });
    client.on('end', () => { if (this.#client === client) this.#client = undefined; });
    await client.connect();
    try {
      // Over a Unix socket the keepalive settings are accepted and do nothing.
      const { idle, interval, count } = this.#keepalives;
      const { rows } = await client.query<{ ok: boolean }>(`SELECT set_config('tcp_keepalives_idle', $3, false), set_config('tcp_keepalives_interval', $4, false),
        set_config('tcp_keepalives_count', $5, false), pg_try_advisory_lock(hashtext($1), hashtext($2)) AS ok`,
      [this.#space, this.#instanceId, String(idle), String(interval), String(count)]);
      if (rows[0]?.ok !== true) {
        throw new SmppdError(ErrorCode.INTERNAL,
          `another running smppd uses the instance id ${this.#instanceId} on this store; each instance needs its own`, { instanceId: this.#instanceId });
      }
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    this.#client = client;
  }

  async release(): Promise<void> {
    this.#closed = true;
    // An attempt under way first: the session it opens is ended here with the rest.
    await this.#taking?.catch(() => undefined);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}
