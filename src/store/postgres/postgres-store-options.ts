/** What `PostgresStore.open` takes, and its checks. */
import type { Clock } from '../../core/clock.js';
import { ErrorCode, SmppdError } from '../../core/errors.js';
import { SCHEMA_NAME } from './migrations.js';

export interface PostgresStoreOptions {
  /** postgres://user:password@host:5432/db (a secret: never logged). */
  url: string;
  /** The schema the tables live in, created when missing. Default smppd. Lower-case letters, digits, _ (at most 63). */
  schema?: string;
  /**
   * This process's name among the instances that share the store, the same across its restarts
   * (a hostname, a pod name of a StatefulSet). Two running processes may not share one: the second
   * is refused at open. A restart recovers the parts its previous run left inflight.
   */
  instanceId: string;
  /**
   * Milliseconds a claim (of parts, of events) holds against the other instances after this
   * instance is gone (crashed, or cut off from the database). Default 300000 (5 minutes). > 0.
   * While the instance is connected its claims hold however long it keeps them: it renews their
   * leases (`renewLeases`, `renewEventLeases`), and the others take over only the claims of an
   * instance whose lock is free too (`recoverAbandoned`).
   */
  leaseMs?: number;
  /** Connections in the pool. Default 10. 1–1000. One more is held for the instance lock. */
  poolSize?: number;
  /** Read for the time of the outbox leases given back at open; nothing else. Default the system clock. */
  clock?: Clock;
}

export const DEFAULT_LEASE_MS = 300_000;

/** The options with their defaults; throws INTERNAL for one out of its range (the config validates them first). */
export function checkedOptions(options: PostgresStoreOptions): { schema: string; leaseMs: number; poolSize: number } {
  const schema = options.schema ?? 'smppd';
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  const poolSize = options.poolSize ?? 10;
  if (!SCHEMA_NAME.test(schema)) throw new SmppdError(ErrorCode.INTERNAL, `the store schema must be a lower-case SQL name; got ${JSON.stringify(schema)}`);
  if (options.instanceId.length === 0) throw new SmppdError(ErrorCode.INTERNAL, 'the store needs an instance id');
  if (!(leaseMs > 0)) throw new SmppdError(ErrorCode.INTERNAL, `leaseMs must be > 0; got ${leaseMs}`);
  if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 1000) throw new SmppdError(ErrorCode.INTERNAL, `poolSize must be 1–1000; got ${poolSize}`);
  return { schema, leaseMs, poolSize };
}
