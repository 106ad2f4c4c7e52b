-- Meter buckets (docs/architecture.md, "Meter buckets and exactly-once").
--
-- event_keys: one entry per accepted event, the dedup store. key and check are the two halves
-- of md5(tenant \0 environment \0 event_id); an event whose key and check are present is a
-- duplicate and never reaches a bucket. RocksDB gives point lookups whatever the table size.
CREATE TABLE IF NOT EXISTS {db}.event_keys
(
    key   UInt64,
    check UInt64
)
ENGINE = EmbeddedRocksDB
PRIMARY KEY key;

-- One row per (meter, counted event): the meter's value and its declared group value already
-- extracted. Feeds the two partial edge minutes of a period, group_by on undeclared properties
-- (joined with events_raw for the properties), and audits. Rows are
-- written once per event; a crash replay may write a row again, which merges away (reads of
-- this table use FINAL over a customer's narrow time range only).
CREATE TABLE IF NOT EXISTS {db}.meter_events
(
    tenant_id            LowCardinality(String),
    environment_id       LowCardinality(String),
    meter_id             String,
    external_customer_id String,
    timestamp            DateTime64(3, 'UTC'),
    event_id             String,
    value                Decimal(38, 12),
    value_text           String,
    source               LowCardinality(String),
    group_values         Array(String),
    ingested_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (tenant_id, environment_id, meter_id, external_customer_id, timestamp, event_id);

-- Minute buckets with partial aggregate states, exact for every aggregation over any range of
-- whole buckets: sums, max, the latest (timestamp, event_id, value) and the exact set of
-- distinct values. The aggregator inserts one row per (meter, event); merges fold rows of the
-- same key. Rows with meter_id '~ledger' are the aggregator's write ledger (one per Kafka
-- partition and month), written in the same insert block as the buckets they vouch for.
CREATE TABLE IF NOT EXISTS {db}.meter_buckets
(
    tenant_id            LowCardinality(String),
    environment_id       LowCardinality(String),
    meter_id             String,
    external_customer_id String,
    bucket_start         DateTime('UTC'),
    group_values         Array(String),
    source               LowCardinality(String),
    value_sum            SimpleAggregateFunction(sum, Decimal(38, 12)),
    event_count          SimpleAggregateFunction(sum, UInt64),
    value_max            SimpleAggregateFunction(max, Decimal(38, 12)),
    latest               SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), String, Decimal(38, 12))),
    uniq                 SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    ledger               SimpleAggregateFunction(max, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket_start)
ORDER BY (tenant_id, environment_id, meter_id, external_customer_id, bucket_start, group_values, source);

-- Meters whose buckets are complete up to the live path (backfilled from events_raw, or live
-- from their creation). activated_us orders activations against the write ledger.
CREATE TABLE IF NOT EXISTS {db}.meter_activations
(
    meter_id     String,
    activated_us UInt64
)
ENGINE = ReplacingMergeTree(activated_us)
ORDER BY meter_id;

-- Earlier layouts are replaced: per-event rows are rebuilt by the backfill of every meter at the
-- first start, and the dedup store is seeded from the events already accepted.
INSERT INTO {db}.event_keys
SELECT reinterpretAsUInt64(reverse(substring(h, 1, 8))), reinterpretAsUInt64(reverse(substring(h, 9, 8)))
FROM (SELECT MD5(concat(tenant_id, '\0', environment_id, '\0', event_id)) AS h FROM {db}.events_raw);

DROP TABLE IF EXISTS {db}.meter_usage;
