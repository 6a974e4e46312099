/**
 * What the scale-out benchmark does in PostgreSQL, over a connection of its own (an operator's
 * psql, not the daemon's store code): a fresh schema for the instances, how many messages are
 * DELIVERED while it waits, every message's times once it is done, and the schema dropped after.
 *
 * A message is known by its destination: the bench publishes the n-th request to
 * 4477 followed by n in 9 digits (`sendSmsBody`), so the last 9 digits give n, and n the time it
 * was published.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { percentile, round } from './stats.js';

/** The most a bench statement may wait for a lock (a daemon not yet gone), ms. */
const LOCK_TIMEOUT_MS = 30_000;

export class BenchSchema {
  private constructor(private readonly client: pg.Client, readonly name: string) {}

  /** Connects and creates `smppd_bench_<random>` (the daemons find it there and migrate it). */
  static async create(url: string): Promise<BenchSchema> {
    const client = new pg.Client({ connectionString: url, options: `-c lock_timeout=${LOCK_TIMEOUT_MS}` });
    client.on('error', () => {}); // a dropped connection fails the next query
    await client.connect();
    const name = `smppd_bench_${randomBytes(6).toString('hex')}`;
    try {
      await client.query(`CREATE SCHEMA ${name}`);
    } catch (e) {
      await client.end().catch(() => {});
      throw e;
    }
    return new BenchSchema(client, name);
  }

  /** Distinct messages (by destination) DELIVERED so far. */
  async deliveredCount(): Promise<number> {
    const r = await this.client.query<{ n: string }>(`SELECT count(DISTINCT destination) AS n FROM ${this.name}.messages WHERE status = 'DELIVERED'`);
    return Number(r.rows[0]?.n ?? 0);
  }

  /** Every message: n (from its destination), status and times (wall ms). */
  async messages(): Promise<StoredMessage[]> {
    const r = await this.client.query<{ destination: string; status: string; created_at: string; updated_at: string }>(
      `SELECT destination, status, created_at, updated_at FROM ${this.name}.messages`);
    return r.rows.map((row) => ({ n: Number(row.destination.slice(-9)), status: row.status, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) }));
  }

  /** Where the messages not DELIVERED are: parts by state and status, and receipts parked for a part not yet answered. */
  async stuck(): Promise<{ parts: Record<string, number>; parkedReceipts: number }> {
    const parts = await this.client.query<{ state: string; status: string; n: string }>(
      `SELECT state, status, count(*) AS n FROM ${this.name}.parts WHERE status <> 'DELIVERED' GROUP BY state, status ORDER BY state, status`);
    const parked = await this.client.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.name}.parked_receipts`);
    return {
      parts: Object.fromEntries(parts.rows.map((p) => [`${p.state}/${p.status}`, Number(p.n)])),
      parkedReceipts: Number(parked.rows[0]?.n ?? 0),
    };
  }

  /** Drops the schema (the daemons must be gone) and closes the connection; never throws. */
  async drop(): Promise<string | null> {
    let problem: string | null = null;
    try {
      await this.client.query(`DROP SCHEMA IF EXISTS ${this.name} CASCADE`);
    } catch (e) {
      problem = `could not drop schema ${this.name}: ${e instanceof Error ? e.message : String(e)}`;
    }
    await this.client.end().catch(() => {});
    return problem;
  }
}

export interface StoredMessage {
  n: number;
  status: string;
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryFigures {
  /** Distinct requests stored (a request stored twice counts once). */
  stored: number;
  /** Rows beyond one per request: requests stored twice (the queue ingress is at least once). */
  storedTwice: number;
  delivered: number;
  /** Requests stored and not DELIVERED, by status. */
  notDelivered: Record<string, number>;
  /** Wall ms of the last store and of the last DELIVERED (NaN: none). */
  lastStoredAt: number;
  lastDeliveredAt: number;
  /** Publish to stored (time in the queue and the accept), accept to DELIVERED, publish to DELIVERED: ms. */
  publishToStored: Quantiles;
  acceptToDelivered: Quantiles;
  publishToDelivered: Quantiles;
}

export interface Quantiles {
  p50: number;
  p99: number;
  max: number;
}

/** Figures from the rows and the publish times (index n). A request's first row counts; its DELIVERED row if it has one. */
export function deliveryFigures(rows: readonly StoredMessage[], publishedAt: Float64Array): DeliveryFigures {
  const byN = new Map<number, StoredMessage>();
  let storedTwice = 0;
  for (const row of rows) {
    const seen = byN.get(row.n);
    if (seen === undefined) {
      byN.set(row.n, row);
      continue;
    }
    storedTwice++;
    const better = (row.status === 'DELIVERED') !== (seen.status === 'DELIVERED') ? row.status === 'DELIVERED' : row.createdAt < seen.createdAt;
    if (better) byN.set(row.n, row);
  }
  const toStored: number[] = [];
  const toDelivered: number[] = [];
  const publishToDelivered: number[] = [];
  const notDelivered: Record<string, number> = {};
  let lastStoredAt = NaN;
  let lastDeliveredAt = NaN;
  for (const [n, m] of byN) {
    const published = n < publishedAt.length ? publishedAt[n]! : NaN;
    toStored.push(m.createdAt - published);
    lastStoredAt = Number.isNaN(lastStoredAt) ? m.createdAt : Math.max(lastStoredAt, m.createdAt);
    if (m.status !== 'DELIVERED') {
      notDelivered[m.status] = (notDelivered[m.status] ?? 0) + 1;
      continue;
    }
    toDelivered.push(m.updatedAt - m.createdAt);
    publishToDelivered.push(m.updatedAt - published);
    lastDeliveredAt = Number.isNaN(lastDeliveredAt) ? m.updatedAt : Math.max(lastDeliveredAt, m.updatedAt);
  }
  return {
    stored: byN.size, storedTwice, delivered: toDelivered.length, notDelivered, lastStoredAt, lastDeliveredAt,
    publishToStored: quantiles(toStored), acceptToDelivered: quantiles(toDelivered), publishToDelivered: quantiles(publishToDelivered),
  };
}

function quantiles(values: number[]): Quantiles {
  const finite = values.filter((v) => Number.isFinite(v));
  return {
    p50: round(percentile(finite, 50), 0),
    p99: round(percentile(finite, 99), 0),
    max: finite.length > 0 ? round(finite.reduce((m, v) => Math.max(m, v), -Infinity), 0) : NaN,
  };
}
