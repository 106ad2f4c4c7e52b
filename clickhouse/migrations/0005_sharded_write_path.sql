-- The sharded write path (docs/architecture.md, "The write path").
--
-- dedup_keys: the dedup store, one row per counted event: shard, the two halves of
-- md5(tenant \0 environment \0 event_id) and the write (epoch, seq of its shard) that counted
-- it. A MergeTree family table, so a replicated cluster or ClickHouse Cloud holds it like any
-- other (the EmbeddedRocksDB table it replaces lives on one replica). It is read by shard when
-- a writer takes a shard over; lookups are served from the writer's memory.
CREATE TABLE IF NOT EXISTS {db}.dedup_keys
(
    shard  UInt16,
    key    UInt64,
    check  UInt64,
    epoch  UInt64,
    seq    UInt64
)
ENGINE = ReplacingMergeTree
ORDER BY (shard, key, check);

-- Keys of the earlier store: counted before any cut (epoch 0, seq 0). shard = key mod 64.
INSERT INTO {db}.dedup_keys SELECT toUInt16(key % 64), key, check, 0, 0 FROM {db}.event_keys;

-- origin: '' for the live path, 'bf:<token>' for a backfill attempt. Part of the sorting key,
-- so rows of different origins never fold and a retried backfill deletes only its own rows.
ALTER TABLE {db}.meter_buckets ADD COLUMN IF NOT EXISTS origin String,
    MODIFY ORDER BY (tenant_id, environment_id, meter_id, external_customer_id, bucket_start, group_values, source, origin);

-- This database's identity: the write path's Postgres records (fence, cuts, backfills) are
-- kept per ClickHouse database.
CREATE TABLE IF NOT EXISTS {db}.write_path_store (id String) ENGINE = MergeTree ORDER BY tuple();
INSERT INTO {db}.write_path_store SELECT toString(generateUUIDv4());
