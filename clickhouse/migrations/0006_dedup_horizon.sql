-- Data lifecycle (README, "Data lifecycle"): the day of each counted event beside its dedup key,
-- so keys older than the dedup horizon leave the writers' memory and, by TTL (set at start-up
-- from the configuration: clickhouse/retention.ts), the disk. Keys written before this
-- migration do not know their day: they read as 2100-01-01 and are kept.
ALTER TABLE {db}.dedup_keys ADD COLUMN IF NOT EXISTS event_day Date DEFAULT toDate('2100-01-01');
