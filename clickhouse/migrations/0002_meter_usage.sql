-- One row per (meter, event) that the meter matched, with the meter's value already extracted
-- (field, multiplier, filters applied). Usage queries bucket these rows by window at read time;
-- group_by reads the event's properties (JSON text) at query time.
-- The key ends in event_id so a duplicate event can never be counted twice by a meter,
-- whatever else about it differs; reads use FINAL.
CREATE TABLE IF NOT EXISTS {db}.meter_usage
(
    tenant_id            LowCardinality(String),
    environment_id       LowCardinality(String),
    meter_id             String,
    event_id             String,
    external_customer_id String,
    timestamp            DateTime64(3, 'UTC'),
    value                Decimal(38, 12),
    value_text           String,
    source               LowCardinality(String),
    properties           String,
    ingested_at          DateTime64(3, 'UTC'),
    dedup_version        UInt64,
    INDEX idx_customer external_customer_id TYPE bloom_filter GRANULARITY 4,
    INDEX idx_timestamp timestamp TYPE minmax GRANULARITY 4
)
ENGINE = ReplacingMergeTree(dedup_version)
ORDER BY (tenant_id, environment_id, meter_id, event_id)
