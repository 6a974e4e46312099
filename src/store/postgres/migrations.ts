/**
 * The schema of the PostgreSQL store, as numbered migrations recorded in `schema_migrations`,
 * which `migrate` (`migrate.ts`) applies. A migration is never edited once released; a change is
 * a new one.
 *
 * The tables are those of the SQLite store (`../sqlite/migrations.ts`: version 1 here is its
 * version 3, version 2 its version 4; versions 3 and 4 are PostgreSQL's own) with
 * the same names and flags (0/1 SMALLINT, so the row types of `../rows.ts` are shared), times as
 * BIGINT milliseconds, and what several instances need besides: who holds an inflight part and
 * until when (`parts.claimed_by`, `parts.lease_until`), who leased an event (`outbox.leased_by`).
 */
import type { Migration } from '../rules/migrations.js';
import { PG_ADMIN_MIGRATION } from './admin.js';
import { PG_BATCH_TURNS_MIGRATION } from './batch-turns.js';
import { PG_EVENT_DELIVERIES_MIGRATION } from './event-delivery.js';
import { PG_IDEMPOTENCY_MIGRATION } from './idempotency.js';
import { PG_RECORDS_MIGRATION } from './message-records.js';
import { PG_RECURRENCE_MIGRATION } from './recurrence.js';
import { regulatoryMigration } from '../rules/regulatory.js';

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
CREATE TABLE batches (
  id            BIGSERIAL PRIMARY KEY,
  client        TEXT     NOT NULL,
  sender_id     TEXT     NOT NULL,
  req_type      TEXT     NOT NULL,
  message_type  TEXT     NOT NULL,
  campaign_name TEXT,
  state         TEXT     NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'aborted')),
  total         INTEGER  NOT NULL DEFAULT 0,
  processed     INTEGER  NOT NULL DEFAULT 0,
  created_at    BIGINT   NOT NULL,
  updated_at    BIGINT   NOT NULL
);
CREATE INDEX batches_client ON batches (client, id);

CREATE TABLE schedules (
  id         BIGSERIAL PRIMARY KEY,
  client     TEXT     NOT NULL,
  batch_id   BIGINT   NOT NULL UNIQUE REFERENCES batches (id),
  run_at     BIGINT   NOT NULL,
  repeat     TEXT,
  state      TEXT     NOT NULL DEFAULT 'scheduled' CHECK (state IN ('scheduled', 'released', 'cancelled')),
  created_at BIGINT   NOT NULL,
  updated_at BIGINT   NOT NULL
);
CREATE INDEX schedules_client ON schedules (client, id);
CREATE INDEX schedules_due ON schedules (run_at) WHERE state = 'scheduled';

CREATE TABLE messages (
  seq                 BIGSERIAL PRIMARY KEY,
  id                  TEXT     NOT NULL UNIQUE,
  client              TEXT     NOT NULL,
  upstream            TEXT     NOT NULL,
  batch_id            BIGINT   REFERENCES batches (id),
  source              TEXT     NOT NULL,
  destination         TEXT     NOT NULL,
  text                TEXT     NOT NULL,
  message_type        TEXT     NOT NULL,
  encoding            TEXT     NOT NULL,
  campaign_name       TEXT,
  registered_delivery INTEGER  NOT NULL,
  source_ton          INTEGER  NOT NULL,
  source_npi          INTEGER  NOT NULL,
  dest_ton            INTEGER  NOT NULL,
  dest_npi            INTEGER  NOT NULL,
  validity_period     TEXT     NOT NULL,
  expires_at          BIGINT,
  not_before          BIGINT,
  status              TEXT     NOT NULL DEFAULT 'SUBMITTED',
  reason              TEXT,
  processed           SMALLINT NOT NULL DEFAULT 0,
  events              SMALLINT NOT NULL DEFAULT 0,
  created_at          BIGINT   NOT NULL,
  updated_at          BIGINT   NOT NULL
);
CREATE INDEX messages_batch ON messages (batch_id) WHERE batch_id IS NOT NULL;
-- resendDlr walks a client's messages in seq order
CREATE INDEX messages_client ON messages (client, seq);

CREATE TABLE parts (
  message_id    TEXT     NOT NULL REFERENCES messages (id),
  part          INTEGER  NOT NULL,
  message_seq   BIGINT   NOT NULL,
  upstream      TEXT     NOT NULL,
  batch_id      BIGINT,
  expires_at    BIGINT,
  held          SMALLINT NOT NULL DEFAULT 0,
  data_coding   INTEGER  NOT NULL,
  esm_class     INTEGER  NOT NULL,
  short_message BYTEA    NOT NULL,
  sar_ref       INTEGER,
  sar_total     INTEGER,
  sar_seq       INTEGER,
  payload       BYTEA,
  state         TEXT     NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'inflight', 'done')),
  status        TEXT     NOT NULL DEFAULT 'SUBMITTED',
  smsc_id       TEXT,
  match_key     TEXT,
  bind          TEXT,
  attempts      INTEGER  NOT NULL DEFAULT 0,
  not_before    BIGINT,
  reason        TEXT,
  updated_at    BIGINT   NOT NULL,
  -- inflight: the instance that claimed it, and until when its claim holds against the others
  claimed_by    TEXT,
  lease_until   BIGINT,
  PRIMARY KEY (message_id, part)
);
-- claim: the oldest claimable part of an upstream, in order, without a sort
CREATE INDEX parts_claim ON parts (upstream, message_seq, part) WHERE state = 'queued' AND held = 0;
-- a receipt on any bind of any instance finds its part
CREATE INDEX parts_match ON parts (upstream, match_key) WHERE match_key IS NOT NULL;
CREATE INDEX parts_inflight ON parts (claimed_by, lease_until) WHERE state = 'inflight';
-- a message's queued parts (the claim's NOT EXISTS and UPDATE), and the queue's depth
CREATE INDEX parts_queued ON parts (message_id, part) WHERE state = 'queued';
CREATE INDEX parts_batch ON parts (batch_id, state) WHERE batch_id IS NOT NULL;
CREATE INDEX parts_expiry ON parts (expires_at) WHERE state = 'queued' AND expires_at IS NOT NULL;

-- receipts that came before the submit_sm_resp of their part
CREATE TABLE parked_receipts (
  id          BIGSERIAL PRIMARY KEY,
  upstream    TEXT    NOT NULL,
  keys        TEXT    NOT NULL,
  status      TEXT,
  reason      TEXT,
  raw         TEXT    NOT NULL,
  received_at BIGINT  NOT NULL
);
CREATE TABLE parked_receipt_keys (
  parked_id BIGINT NOT NULL REFERENCES parked_receipts (id) ON DELETE CASCADE,
  upstream  TEXT   NOT NULL,
  key       TEXT   NOT NULL,
  PRIMARY KEY (upstream, key, parked_id)
);
CREATE INDEX parked_receipt_keys_parked ON parked_receipt_keys (parked_id);
CREATE INDEX parked_receipts_received ON parked_receipts (received_at);

-- every receipt matched to a part, the ignored ones too
CREATE TABLE receipts (
  id          BIGSERIAL PRIMARY KEY,
  message_id  TEXT     NOT NULL REFERENCES messages (id),
  part        INTEGER  NOT NULL,
  upstream    TEXT     NOT NULL,
  key         TEXT     NOT NULL,
  status      TEXT,
  reason      TEXT,
  changed     SMALLINT NOT NULL,
  ignored     TEXT,
  raw         TEXT     NOT NULL,
  received_at BIGINT   NOT NULL
);
CREATE INDEX receipts_part ON receipts (message_id, part);

CREATE TABLE inbound (
  id          BIGSERIAL PRIMARY KEY,
  upstream    TEXT    NOT NULL,
  client      TEXT,
  source      TEXT    NOT NULL,
  destination TEXT    NOT NULL,
  text        TEXT    NOT NULL,
  data_coding INTEGER NOT NULL,
  parts       INTEGER NOT NULL,
  received_at BIGINT  NOT NULL
);

-- payload as TEXT: sent as stored, byte for byte (jsonb would reorder its keys)
CREATE TABLE outbox (
  id              BIGSERIAL PRIMARY KEY,
  kind            TEXT    NOT NULL CHECK (kind IN ('status', 'inbound')),
  message_id      TEXT,
  client          TEXT,
  upstream        TEXT,
  payload         TEXT    NOT NULL,
  created_at      BIGINT  NOT NULL,
  queued_at       BIGINT  NOT NULL,
  -- pending: the oldest undelivered event of its message (or of none), due at next_attempt_at;
  -- blocked: waits behind an earlier event of its message; dead: parked after its last attempt
  state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'blocked', 'dead')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT  NOT NULL,
  lease_until     BIGINT,
  leased_by       TEXT,
  last_error      TEXT,
  died_at         BIGINT
);
-- a client's due events, oldest due first
CREATE INDEX outbox_due ON outbox (client, next_attempt_at, id) WHERE state = 'pending';
-- a message's undelivered events: the oldest is pending, the others blocked behind it
CREATE INDEX outbox_live ON outbox (message_id, id) WHERE state IN ('pending', 'blocked') AND message_id IS NOT NULL;
CREATE INDEX outbox_blocked ON outbox (client) WHERE state = 'blocked';
CREATE INDEX outbox_dead ON outbox (client, id) WHERE state = 'dead';
CREATE INDEX outbox_message_dead ON outbox (message_id, id) WHERE state = 'dead' AND message_id IS NOT NULL;
CREATE INDEX outbox_leased ON outbox (leased_by) WHERE lease_until IS NOT NULL;
`,
  },
  {
    version: 2,
    name: 'retention',
    // As the SQLite store's version 4: the retention sweep (`retention.ts`) walks messages,
    // batches and inbound messages by (time, id), and an inbound message is kept while its event
    // names it. The column is added without a default (no rewrite); the indexes are built under
    // the migration lock and in its transaction, so instances starting with this version wait for
    // the build, and the writes of instances still running the old one wait for its commit
    // (README, Operations: stop them all to upgrade).
    sql: `
CREATE INDEX messages_created ON messages (created_at, seq);
CREATE INDEX batches_created ON batches (created_at, id);
CREATE INDEX inbound_received ON inbound (received_at, id);
ALTER TABLE outbox ADD COLUMN inbound_id BIGINT;
UPDATE outbox SET inbound_id = (payload::json ->> 'inboundId')::bigint WHERE kind = 'inbound';
CREATE INDEX outbox_inbound ON outbox (inbound_id) WHERE inbound_id IS NOT NULL;
`,
  },
  {
    version: 3,
    name: 'hot-path writes',
    // No SQLite version of its own: what it changes costs PostgreSQL CPU per status change.
    // - Room in each page for new versions of its rows (fillfactor 70, new pages only; the rows
    //   of before stay packed until they go): a message's SENT and DELIVERED, and a part's
    //   receipt, then update in place, without a new entry in each of the table's indexes.
    // - The foreign keys from parts and receipts to messages go: the store writes a message and
    //   its parts in one statement, a receipt under its message's row lock, and deletes receipts
    //   and parts with their message (retention). Each check was a lookup and a row lock of the
    //   message (with its WAL record) for every part and every receipt. Fast to apply: nothing
    //   is rewritten.
    sql: `
ALTER TABLE messages SET (fillfactor = 70);
ALTER TABLE parts SET (fillfactor = 70);
ALTER TABLE parts DROP CONSTRAINT IF EXISTS parts_message_id_fkey;
ALTER TABLE receipts DROP CONSTRAINT IF EXISTS receipts_message_id_fkey;
`,
  },
  {
    version: 4,
    name: 'message updates in place',
    // Room in each new page of messages for a new version of every row (fillfactor 50, as 3: new
    // pages only). One status transaction updates the messages of a whole batch, consecutive in
    // the table, and the versions it makes cannot be pruned before it commits: at 70 a page had
    // room for about 8 of its 19 rows' new versions, and the rest went to other pages with a new
    // entry in each of the table's 4 indexes: under load, close to half of all message updates.
    // At 50 almost every update stays on its page, and PostgreSQL spends less CPU per message.
    // The table takes 40 % more pages than at 70.
    sql: `ALTER TABLE messages SET (fillfactor = 50);`,
  },
  {
    version: 5,
    name: 'inbound parts',
    // As the SQLite store's version 5: the parts of a concatenated MO wait in inbound_parts,
    // committed before their deliver_sm_resp, and inbound_assembled keeps a digest per part of each
    // message lately stored (`../rules/inbound-parts.ts`). Parts of one message that arrive at
    // several instances are serialised by an advisory lock per message (`inbound-parts.ts`).
    sql: `
CREATE TABLE inbound_parts (
  upstream         TEXT     NOT NULL,
  source           TEXT     NOT NULL,
  destination      TEXT     NOT NULL,
  ref              INTEGER  NOT NULL,
  total            INTEGER  NOT NULL,
  seq              INTEGER  NOT NULL,
  data_coding      INTEGER  NOT NULL,
  body             BYTEA    NOT NULL,
  locking_shift    INTEGER,
  single_shift     INTEGER,
  udh_invalid      SMALLINT NOT NULL,
  default_alphabet TEXT     NOT NULL,
  client           TEXT,
  events           SMALLINT NOT NULL,
  received_at      BIGINT   NOT NULL,
  PRIMARY KEY (upstream, source, destination, ref, total, seq)
);
CREATE INDEX inbound_parts_received ON inbound_parts (received_at);
CREATE TABLE inbound_assembled (
  upstream     TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  destination  TEXT    NOT NULL,
  ref          INTEGER NOT NULL,
  total        INTEGER NOT NULL,
  digests      BYTEA   NOT NULL,
  assembled_at BIGINT  NOT NULL,
  PRIMARY KEY (upstream, source, destination, ref, total)
);
CREATE INDEX inbound_assembled_at ON inbound_assembled (assembled_at);
ALTER TABLE inbound ADD COLUMN missing_parts TEXT;
ALTER TABLE inbound ADD COLUMN problems TEXT;
ALTER TABLE inbound ADD COLUMN raw BYTEA;
`,
  },
  {
    version: 6,
    name: 'parked receipts per upstream',
    // pruneParked keeps each upstream's newest parked receipts and deletes the rest: read on this
    // index backwards from the newest, it passes `max` entries instead of sorting the table.
    sql: `CREATE INDEX parked_receipts_upstream ON parked_receipts (upstream, received_at, id);`,
  },
  {
    version: 7,
    name: 'fair sharing between clients',
    // As the SQLite store's version 7: parts repeat their message's client, so a claim takes
    // each client's oldest ready parts (parts_claim leads with the client after the upstream: one
    // range per client, in message order) and the queue depth is counted per client off
    // parts_queued, which carries the client (an index-only scan, as the total count was). The
    // column is added without a default (no rewrite) and copied to the parts not yet done, the
    // only ones whose client is read (a done part never goes back to the queue); parts done
    // before this version keep NULL. The indexes are partial (queued parts only): small to build.
    sql: `
ALTER TABLE parts ADD COLUMN client TEXT;
DROP INDEX parts_claim;
DROP INDEX parts_queued;
UPDATE parts p SET client = m.client FROM messages m WHERE m.id = p.message_id AND p.state IN ('queued', 'inflight');
CREATE INDEX parts_claim ON parts (upstream, client, message_seq, part) WHERE state = 'queued' AND held = 0;
CREATE INDEX parts_queued ON parts (message_id, part) INCLUDE (client) WHERE state = 'queued';
`,
  },
  {
    version: 8,
    name: 'inbound parts by concatenation scheme',
    // As the SQLite store's version 8: the concatenation scheme (udh8, udh16, sar) joins the keys
    // of inbound_parts and inbound_assembled. Rows from before (parts of messages a few minutes
    // old at most) are taken as udh8, udh16 when their reference does not fit 8 bits. Both tables
    // are small: the UPDATE and the new keys cost little.
    sql: `
ALTER TABLE inbound_parts ADD COLUMN scheme TEXT;
UPDATE inbound_parts SET scheme = CASE WHEN ref > 255 THEN 'udh16' ELSE 'udh8' END;
ALTER TABLE inbound_parts ALTER COLUMN scheme SET NOT NULL,
  DROP CONSTRAINT inbound_parts_pkey, ADD PRIMARY KEY (upstream, source, destination, scheme, ref, total, seq);
ALTER TABLE inbound_assembled ADD COLUMN scheme TEXT;
UPDATE inbound_assembled SET scheme = CASE WHEN ref > 255 THEN 'udh16' ELSE 'udh8' END;
ALTER TABLE inbound_assembled ALTER COLUMN scheme SET NOT NULL,
  DROP CONSTRAINT inbound_assembled_pkey, ADD PRIMARY KEY (upstream, source, destination, scheme, ref, total);
`,
  },
  {
    version: 9,
    name: 'routes and failover',
    // As the SQLite store's version 9: a message keeps its route (NULL for those from before), and
    // parts_movable lists an upstream's queued messages by their first part, in message order, held
    // ones not (a failover moves only what a claim could take now, and must not read a paused
    // campaign to pass over it). The column is added without a default (no rewrite); the index is
    // partial (queued first parts not held only), but its build reads the whole of parts under the
    // migration lock.
    sql: `
ALTER TABLE messages ADD COLUMN route TEXT;
CREATE INDEX parts_movable ON parts (upstream, message_seq) WHERE state = 'queued' AND part = 1 AND held = 0;
`,
  },
  PG_IDEMPOTENCY_MIGRATION,
  PG_ADMIN_MIGRATION,
  PG_RECORDS_MIGRATION,
  PG_EVENT_DELIVERIES_MIGRATION,
  regulatoryMigration('BYTEA'),
  PG_BATCH_TURNS_MIGRATION,
  PG_RECURRENCE_MIGRATION,
];

/** A schema name as smppd accepts it (the config's rule): lower-case letters, digits and _, at most 63. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
