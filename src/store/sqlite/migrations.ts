/**
 * The schema of the SQLite store, as numbered migrations, which `migrate` (`migrate.ts`)
 * applies. A migration is never edited once released; a change is a new one.
 */
import type { Migration } from '../rules/migrations.js';
import { ADMIN_MIGRATION } from './admin.js';
import { BATCH_TURNS_MIGRATION } from './batch-turns.js';
import { EVENT_DELIVERIES_MIGRATION } from './event-delivery.js';
import { IDEMPOTENCY_MIGRATION } from './idempotency.js';
import { RECORDS_MIGRATION } from './message-records.js';
import { RECURRENCE_MIGRATION } from './recurrence.js';
import { regulatoryMigration } from '../rules/regulatory.js';

/**
 * Notes on migration 1:
 * - `parts` repeats its message's upstream, batch, order (`message_seq`) and `expires_at`, so
 *   claim, expiry and receipt matching read one table through one index each.
 * - `parts.held` is 1 while the batch is paused/aborted or its schedule is not released; it is
 *   kept on every part not yet done, so a part that goes back to the queue is held as it should.
 * - `messages.processed` is 1 once the message has a final status or all its parts are done; it
 *   never goes back, so `batches.processed` is a counter moved in the same transaction.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
CREATE TABLE batches (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  client        TEXT    NOT NULL,
  sender_id     TEXT    NOT NULL,
  req_type      TEXT    NOT NULL,
  message_type  TEXT    NOT NULL,
  campaign_name TEXT,
  state         TEXT    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'aborted')),
  total         INTEGER NOT NULL DEFAULT 0,
  processed     INTEGER NOT NULL DEFAULT 0,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
);
CREATE INDEX batches_client ON batches (client, id);

CREATE TABLE schedules (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  client     TEXT    NOT NULL,
  batch_id   INTEGER NOT NULL UNIQUE REFERENCES batches (id),
  run_at     INTEGER NOT NULL,
  repeat     TEXT,
  state      TEXT    NOT NULL DEFAULT 'scheduled' CHECK (state IN ('scheduled', 'released', 'cancelled')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX schedules_client ON schedules (client, id);
CREATE INDEX schedules_due ON schedules (run_at) WHERE state = 'scheduled';

CREATE TABLE messages (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
  id                  TEXT    NOT NULL UNIQUE,
  client              TEXT    NOT NULL,
  upstream            TEXT    NOT NULL,
  batch_id            INTEGER REFERENCES batches (id),
  source              TEXT    NOT NULL,
  destination         TEXT    NOT NULL,
  text                TEXT    NOT NULL,
  message_type        TEXT    NOT NULL,
  encoding            TEXT    NOT NULL,
  campaign_name       TEXT,
  registered_delivery INTEGER NOT NULL,
  source_ton          INTEGER NOT NULL,
  source_npi          INTEGER NOT NULL,
  dest_ton            INTEGER NOT NULL,
  dest_npi            INTEGER NOT NULL,
  validity_period     TEXT    NOT NULL,
  expires_at          INTEGER,
  not_before          INTEGER,
  status              TEXT    NOT NULL DEFAULT 'SUBMITTED',
  reason              TEXT,
  processed           INTEGER NOT NULL DEFAULT 0,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL
);
CREATE INDEX messages_batch ON messages (batch_id) WHERE batch_id IS NOT NULL;

CREATE TABLE parts (
  message_id    TEXT    NOT NULL REFERENCES messages (id),
  part          INTEGER NOT NULL,
  message_seq   INTEGER NOT NULL,
  upstream      TEXT    NOT NULL,
  batch_id      INTEGER,
  expires_at    INTEGER,
  held          INTEGER NOT NULL DEFAULT 0,
  data_coding   INTEGER NOT NULL,
  esm_class     INTEGER NOT NULL,
  short_message BLOB    NOT NULL,
  sar_ref       INTEGER,
  sar_total     INTEGER,
  sar_seq       INTEGER,
  payload       BLOB,
  state         TEXT    NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'inflight', 'done')),
  status        TEXT    NOT NULL DEFAULT 'SUBMITTED',
  smsc_id       TEXT,
  match_key     TEXT,
  bind          TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  not_before    INTEGER,
  reason        TEXT,
  updated_at    INTEGER NOT NULL,
  PRIMARY KEY (message_id, part)
);
-- claim: the oldest claimable part of an upstream, in order, without a sort
CREATE INDEX parts_claim ON parts (upstream, message_seq, part, not_before, expires_at) WHERE state = 'queued' AND held = 0;
-- a receipt on any bind of the upstream finds its part
CREATE INDEX parts_match ON parts (upstream, match_key) WHERE match_key IS NOT NULL;
CREATE INDEX parts_state ON parts (state);
CREATE INDEX parts_batch ON parts (batch_id, state) WHERE batch_id IS NOT NULL;
CREATE INDEX parts_expiry ON parts (expires_at) WHERE state = 'queued' AND expires_at IS NOT NULL;

-- receipts that came before the submit_sm_resp of their part
CREATE TABLE parked_receipts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  upstream    TEXT    NOT NULL,
  keys        TEXT    NOT NULL,
  status      TEXT,
  reason      TEXT,
  raw         TEXT    NOT NULL,
  received_at INTEGER NOT NULL
);
CREATE TABLE parked_receipt_keys (
  parked_id INTEGER NOT NULL REFERENCES parked_receipts (id) ON DELETE CASCADE,
  upstream  TEXT    NOT NULL,
  key       TEXT    NOT NULL,
  PRIMARY KEY (upstream, key, parked_id)
);
CREATE INDEX parked_receipt_keys_parked ON parked_receipt_keys (parked_id);
CREATE INDEX parked_receipts_received ON parked_receipts (received_at);

-- every receipt matched to a part, the ignored ones too
CREATE TABLE receipts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id  TEXT    NOT NULL REFERENCES messages (id),
  part        INTEGER NOT NULL,
  upstream    TEXT    NOT NULL,
  key         TEXT    NOT NULL,
  status      TEXT,
  reason      TEXT,
  changed     INTEGER NOT NULL,
  ignored     TEXT,
  raw         TEXT    NOT NULL,
  received_at INTEGER NOT NULL
);
CREATE INDEX receipts_part ON receipts (message_id, part);

CREATE TABLE inbound (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  upstream    TEXT    NOT NULL,
  source      TEXT    NOT NULL,
  destination TEXT    NOT NULL,
  text        TEXT    NOT NULL,
  data_coding INTEGER NOT NULL,
  parts       INTEGER NOT NULL,
  received_at INTEGER NOT NULL
);

CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  kind            TEXT    NOT NULL CHECK (kind IN ('status', 'inbound')),
  message_id      TEXT,
  client          TEXT,
  upstream        TEXT,
  payload         TEXT    NOT NULL,
  created_at      INTEGER NOT NULL,
  state           TEXT    NOT NULL DEFAULT 'pending',
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL
);
CREATE INDEX outbox_pending ON outbox (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX outbox_message ON outbox (message_id) WHERE message_id IS NOT NULL;
`,
  },
  {
    version: 2,
    name: 'webhook delivery',
    // Before this version no client could have a webhook, so the outbox held events nobody
    // could receive, and old messages keep events = 0. Delivered events are deleted, so the
    // outbox holds what is still to deliver and the dead.
    sql: `
DELETE FROM outbox;
DROP INDEX outbox_pending;
DROP INDEX outbox_message;
ALTER TABLE outbox ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE outbox ADD COLUMN lease_until INTEGER;
ALTER TABLE outbox ADD COLUMN last_error TEXT;
ALTER TABLE outbox ADD COLUMN died_at INTEGER;
-- a client's due events, oldest due first
CREATE INDEX outbox_due ON outbox (client, next_attempt_at, id) WHERE state = 'pending';
-- a message's undelivered events: only the oldest may go
CREATE INDEX outbox_message_pending ON outbox (message_id, id) WHERE state = 'pending' AND message_id IS NOT NULL;
CREATE INDEX outbox_dead ON outbox (client, id) WHERE state = 'dead';
CREATE INDEX outbox_message_dead ON outbox (message_id, id) WHERE state = 'dead' AND message_id IS NOT NULL;

ALTER TABLE messages ADD COLUMN events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbound ADD COLUMN client TEXT;
`,
  },
  {
    version: 3,
    name: 'blocked outbox events',
    // A message's events after its oldest undelivered one wait as 'blocked', outside the due
    // index, and the next one is promoted when the one before is delivered or dies: a claim
    // then reads due heads only, however many events wait behind a receiver that is down.
    sql: `
DROP INDEX outbox_message_pending;
CREATE INDEX outbox_live ON outbox (message_id, id) WHERE state IN ('pending', 'blocked') AND message_id IS NOT NULL;
CREATE INDEX outbox_blocked ON outbox (client) WHERE state = 'blocked';
UPDATE outbox SET state = 'blocked', lease_until = NULL
  WHERE state = 'pending' AND message_id IS NOT NULL
    AND EXISTS (SELECT 1 FROM outbox e WHERE e.message_id = outbox.message_id AND e.state = 'pending' AND e.id < outbox.id);
`,
  },
  {
    version: 4,
    name: 'retention',
    // The retention sweep (`retention.ts`) walks messages, batches and inbound messages in time
    // order; an inbound message is kept while its event is in the outbox, which now names it
    // (before, only its payload did). No table is rebuilt: three indexes, a column added, and the
    // outbox's inbound events (pending and dead ones only: a small table) told their inbound id.
    sql: `
CREATE INDEX messages_created ON messages (created_at);
CREATE INDEX batches_created ON batches (created_at);
CREATE INDEX inbound_received ON inbound (received_at);
ALTER TABLE outbox ADD COLUMN inbound_id INTEGER;
UPDATE outbox SET inbound_id = json_extract(payload, '$.inboundId') WHERE kind = 'inbound';
CREATE INDEX outbox_inbound ON outbox (inbound_id) WHERE inbound_id IS NOT NULL;
`,
  },
  {
    version: 5,
    name: 'inbound parts',
    // The parts of a concatenated MO wait here, committed before their deliver_sm_resp, instead of
    // in memory (a crash lost them); inbound_assembled keeps a digest per part of each message
    // lately stored, to know a part the SMSC delivers again (`../rules/inbound-parts.ts`). An
    // inbound message keeps its missing parts, and what could not be decoded with its raw bytes.
    sql: `
CREATE TABLE inbound_parts (
  upstream         TEXT    NOT NULL,
  source           TEXT    NOT NULL,
  destination      TEXT    NOT NULL,
  ref              INTEGER NOT NULL,
  total            INTEGER NOT NULL,
  seq              INTEGER NOT NULL,
  data_coding      INTEGER NOT NULL,
  body             BLOB    NOT NULL,
  locking_shift    INTEGER,
  single_shift     INTEGER,
  udh_invalid      INTEGER NOT NULL,
  default_alphabet TEXT    NOT NULL,
  client           TEXT,
  events           INTEGER NOT NULL,
  received_at      INTEGER NOT NULL,
  PRIMARY KEY (upstream, source, destination, ref, total, seq)
) WITHOUT ROWID;
CREATE INDEX inbound_parts_received ON inbound_parts (received_at);
CREATE TABLE inbound_assembled (
  upstream     TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  destination  TEXT    NOT NULL,
  ref          INTEGER NOT NULL,
  total        INTEGER NOT NULL,
  digests      BLOB    NOT NULL,
  assembled_at INTEGER NOT NULL,
  PRIMARY KEY (upstream, source, destination, ref, total)
) WITHOUT ROWID;
CREATE INDEX inbound_assembled_at ON inbound_assembled (assembled_at);
ALTER TABLE inbound ADD COLUMN missing_parts TEXT;
ALTER TABLE inbound ADD COLUMN problems TEXT;
ALTER TABLE inbound ADD COLUMN raw BLOB;
`,
  },
  {
    version: 6,
    name: 'parked receipts per upstream',
    // pruneParked keeps each upstream's newest parked receipts and deletes the rest: read on this
    // index backwards from the newest (id is the rowid, in every index), it passes `max` entries
    // instead of sorting the table.
    sql: `CREATE INDEX parked_receipts_upstream ON parked_receipts (upstream, received_at);`,
  },
  {
    version: 7,
    name: 'fair sharing between clients',
    // Parts repeat their message's client, so a claim takes each client's oldest ready parts
    // (parts_claim leads with the client after the upstream: one range per client, in message
    // order) and the queue depth is counted per client off parts_state (state, client). The
    // client is copied to the parts not yet done, the only ones whose client is read: a done
    // part never goes back to the queue. Parts done before this version keep NULL.
    sql: `
ALTER TABLE parts ADD COLUMN client TEXT;
UPDATE parts SET client = (SELECT m.client FROM messages m WHERE m.id = parts.message_id) WHERE state IN ('queued', 'inflight');
DROP INDEX parts_claim;
CREATE INDEX parts_claim ON parts (upstream, client, message_seq, part, not_before, expires_at) WHERE state = 'queued' AND held = 0;
DROP INDEX parts_state;
CREATE INDEX parts_state ON parts (state, client);
`,
  },
  {
    version: 8,
    name: 'inbound parts by concatenation scheme',
    // An MO's parts name their message by a reference and its scheme (a UDH element of 8 or 16
    // bits, or the sar_* TLVs): references 7 of an 8-bit and of a 16-bit UDH are two messages, so
    // the scheme joins both tables' keys (`../rules/inbound-parts.ts`). SQLite cannot change a
    // key: the tables are made again. Rows from before did not keep their scheme; they can only be
    // parts of messages that waited at most a few minutes (MO_MAX_WAIT_MS), and are taken as udh8
    // (the handsets' usual), udh16 when their reference does not fit 8 bits. A part that comes
    // after this under another scheme starts a message of its own; both are stored when their wait
    // ends, with their missing parts listed: nothing is lost.
    sql: `
CREATE TABLE inbound_parts_v8 (
  upstream         TEXT    NOT NULL,
  source           TEXT    NOT NULL,
  destination      TEXT    NOT NULL,
  scheme           TEXT    NOT NULL,
  ref              INTEGER NOT NULL,
  total            INTEGER NOT NULL,
  seq              INTEGER NOT NULL,
  data_coding      INTEGER NOT NULL,
  body             BLOB    NOT NULL,
  locking_shift    INTEGER,
  single_shift     INTEGER,
  udh_invalid      INTEGER NOT NULL,
  default_alphabet TEXT    NOT NULL,
  client           TEXT,
  events           INTEGER NOT NULL,
  received_at      INTEGER NOT NULL,
  PRIMARY KEY (upstream, source, destination, scheme, ref, total, seq)
) WITHOUT ROWID;
INSERT INTO inbound_parts_v8
  SELECT upstream, source, destination, CASE WHEN ref > 255 THEN 'udh16' ELSE 'udh8' END, ref, total, seq, data_coding, body,
    locking_shift, single_shift, udh_invalid, default_alphabet, client, events, received_at
  FROM inbound_parts;
DROP TABLE inbound_parts;
ALTER TABLE inbound_parts_v8 RENAME TO inbound_parts;
CREATE INDEX inbound_parts_received ON inbound_parts (received_at);
CREATE TABLE inbound_assembled_v8 (
  upstream     TEXT    NOT NULL,
  source       TEXT    NOT NULL,
  destination  TEXT    NOT NULL,
  scheme       TEXT    NOT NULL,
  ref          INTEGER NOT NULL,
  total        INTEGER NOT NULL,
  digests      BLOB    NOT NULL,
  assembled_at INTEGER NOT NULL,
  PRIMARY KEY (upstream, source, destination, scheme, ref, total)
) WITHOUT ROWID;
INSERT INTO inbound_assembled_v8
  SELECT upstream, source, destination, CASE WHEN ref > 255 THEN 'udh16' ELSE 'udh8' END, ref, total, digests, assembled_at
  FROM inbound_assembled;
DROP TABLE inbound_assembled;
ALTER TABLE inbound_assembled_v8 RENAME TO inbound_assembled;
CREATE INDEX inbound_assembled_at ON inbound_assembled (assembled_at);
`,
  },
  {
    version: 9,
    name: 'routes and failover',
    // A message keeps the route it was accepted on (NULL for those from before: they have none),
    // and a failover lists an upstream's messages whose parts are all queued and that a claim
    // could take now, oldest first: parts_movable holds the first part of each queued message that
    // is not held by upstream, in message order, with the times that decide whether it is due, so
    // the list reads neither a paused campaign nor a row it passes over. Only first parts, only
    // while queued and not held: one entry per waiting message, added at accept or release and gone
    // at its claim or pause.
    sql: `
ALTER TABLE messages ADD COLUMN route TEXT;
CREATE INDEX parts_movable ON parts (upstream, message_seq, not_before, expires_at) WHERE state = 'queued' AND part = 1 AND held = 0;
`,
  },
  IDEMPOTENCY_MIGRATION, ADMIN_MIGRATION, RECORDS_MIGRATION, EVENT_DELIVERIES_MIGRATION, regulatoryMigration('BLOB'), BATCH_TURNS_MIGRATION,
  RECURRENCE_MIGRATION,
];
