-- Every accepted event, exactly as ingested. Deduplicated by (tenant, environment, event_id):
-- a replayed Kafka record or a client retry inserts the same key again and merges away.
-- dedup_version decreases with ingestion time, so the earliest-ingested copy wins.
CREATE TABLE IF NOT EXISTS {db}.events_raw
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
ORDER BY (tenant_id, environment_id, event_id)
