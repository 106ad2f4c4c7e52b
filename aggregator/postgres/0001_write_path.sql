-- The aggregator's write path (docs/architecture.md, "The write path"). Every table is keyed by
-- `store`: the identity of one ClickHouse database (clickhouse/migrations/0005), whose shards,
-- meter cuts and backfills are independent of another database's.
--
-- write_path_stores: one row per ClickHouse database this Postgres serves.
CREATE TABLE IF NOT EXISTS write_path_stores (
  store            text PRIMARY KEY,
  -- meter_activations of the earlier write path turned into cuts and finished backfills
  legacy_imported  boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now()
);

-- shard_owner: one row per logical shard. A writer holds its row FOR SHARE for the whole of a
-- write; a taker bumps `epoch` (waiting for a write in flight), so a writer whose epoch moved
-- is refused. done_epoch/done_seq: the last write of the shard whose dedup keys are written.
CREATE TABLE IF NOT EXISTS shard_owner (
  store       text NOT NULL,
  shard       integer NOT NULL,
  epoch       bigint NOT NULL DEFAULT 0,
  owner       text NOT NULL DEFAULT '',
  claimed_at  timestamptz,
  done_epoch  bigint NOT NULL DEFAULT 0,
  done_seq    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (store, shard)
);

-- A meter is counted live in shard `shard` by every write from (epoch, seq) on; what the
-- shard counted before that is the backfill's (meter_backfills). (0, 0): live from the start.
CREATE TABLE IF NOT EXISTS meter_cuts (
  store     text NOT NULL,
  meter_id  text NOT NULL,
  shard     integer NOT NULL,
  epoch     bigint NOT NULL,
  seq       bigint NOT NULL,
  PRIMARY KEY (store, meter_id, shard)
);

-- One backfill per meter and database, run by whoever holds the lease. Its bucket rows carry
-- origin = 'bf:' || token, so a retry removes only the rows of the attempt it replaces.
CREATE TABLE IF NOT EXISTS meter_backfills (
  store        text NOT NULL,
  meter_id     text NOT NULL,
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
  token        text NOT NULL DEFAULT '',
  holder       text NOT NULL DEFAULT '',
  lease_until  timestamptz,
  attempts     integer NOT NULL DEFAULT 0,
  events       bigint NOT NULL DEFAULT 0,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store, meter_id)
);

-- The write path's version: an aggregator older than the database's refuses to start
-- (aggregator/version-guard.ts).
CREATE TABLE IF NOT EXISTS write_path_version (
  id       integer PRIMARY KEY CHECK (id = 1),
  version  integer NOT NULL
);
INSERT INTO write_path_version (id, version) VALUES (1, 2) ON CONFLICT (id) DO UPDATE SET version = GREATEST(write_path_version.version, 2);
