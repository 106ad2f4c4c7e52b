-- Dedup keys in time order (docs/architecture.md, "Dedup keys in memory and on disk").
--
-- An event sent with a timestamp is its (tenant, environment, event_id, timestamp): its dedup key
-- becomes md5(tenant \0 environment \0 event_id \0 timestamp in ms), so every copy of it carries
-- the time that puts it in or out of the writers' hot window. An event sent without one (ingest
-- stamped it with the batch's arrival, ingested_at) keeps its id's key. dedup_events holds one row per
-- counted event in (shard, time, key) order: a takeover reads a shard's hot window as one key
-- range (rows read follow the window, not the history), and a lookup of an older event reads
-- one 256-row granule of its (shard, time, key) per part of its day. Daily partitions: a day's
-- parts merge into few soon after the day (fewer granules a lookup), and the horizon's TTL
-- drops whole parts.
CREATE TABLE IF NOT EXISTS {db}.dedup_events
(
    shard  UInt16,
    ms     Int64,
    key    UInt64,
    check  UInt64,
    epoch  UInt64,
    seq    UInt64
)
ENGINE = ReplacingMergeTree
PARTITION BY intDiv(ms, 86400000)
ORDER BY (shard, ms, key, check)
SETTINGS index_granularity = 256;

-- The keys counted so far, under their new identity: every raw event whose id-keyed dedup key
-- was written (an event with raw rows and no key was never counted), with the write that counted
-- it. Keys of events whose raw rows a shorter RETENTION_EVENTS_RAW_DAYS already removed are not
-- carried over. Stop the aggregators before upgrading (npm run down drains them).
INSERT INTO {db}.dedup_events
SELECT k.shard, r.ms, reinterpretAsUInt64(reverse(substring(r.h, 1, 8))), reinterpretAsUInt64(reverse(substring(r.h, 9, 8))), k.epoch, k.seq
FROM (
    SELECT ms, if(ms = received, id_hash, MD5(concat(tenant_id, '\0', environment_id, '\0', event_id, '\0', toString(ms)))) AS h,
           reinterpretAsUInt64(reverse(substring(id_hash, 1, 8))) AS id_key, reinterpretAsUInt64(reverse(substring(id_hash, 9, 8))) AS id_check
    FROM (
        SELECT tenant_id, environment_id, event_id, toUnixTimestamp64Milli(timestamp) AS ms, toUnixTimestamp64Milli(ingested_at) AS received,
               MD5(concat(tenant_id, '\0', environment_id, '\0', event_id)) AS id_hash
        FROM {db}.events_raw FINAL
    )
) AS r
INNER JOIN {db}.dedup_keys AS k ON k.key = r.id_key AND k.check = r.id_check;

-- events_raw merged copies by event_id alone; now by event_id and timestamp (two events with
-- one id and two timestamps are two events). Rebuilt in the new order and swapped in.
CREATE TABLE IF NOT EXISTS {db}.events_raw_by_time
(
    tenant_id            LowCardinality(String),
    environment_id       LowCardinality(String),
    event_id             String,
    event_name           String,
    external_customer_id String,
    customer_id          String,
    timestamp            DateTime64(3, 'UTC'),
    source               LowCardinality(String),
    properties           String,
    ingested_at          DateTime64(3, 'UTC'),
    dedup_version        UInt64,
    INDEX idx_event_name event_name TYPE bloom_filter GRANULARITY 4,
    INDEX idx_customer external_customer_id TYPE bloom_filter GRANULARITY 4,
    INDEX idx_timestamp timestamp TYPE minmax GRANULARITY 4
)
ENGINE = ReplacingMergeTree(dedup_version)
ORDER BY (tenant_id, environment_id, event_id, timestamp);

INSERT INTO {db}.events_raw_by_time SELECT * FROM {db}.events_raw;

EXCHANGE TABLES {db}.events_raw AND {db}.events_raw_by_time;

DROP TABLE IF EXISTS {db}.events_raw_by_time;

DROP TABLE IF EXISTS {db}.dedup_keys;
