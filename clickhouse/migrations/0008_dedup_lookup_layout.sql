-- Cheaper cold lookups in dedup_events (docs/benchmarks.md, "Dedup keys bounded by a hot window").
--
-- A lookup finds each key by its (shard, ms): the primary index holds those two columns alone
-- (the sorting key stays (shard, ms, key, check)), which makes the index analysis of a
-- 20,000-key set about a third of what it was, and compressed blocks of 4-8 KiB (a few granules)
-- instead of 64 KiB-1 MiB, so a key's granule no longer costs decompressing some 64 KiB of each
-- random-digest column: at 200 M stored, 2.5 GB read for a lookup became 0.24 GB. A lookup
-- looks for a key in every part of its day, and merges leave a day at rest in 4-5 parts: a day
-- whose parts are all an hour old is merged into one (min_age_to_force_merge_seconds; the cost:
-- an old day that receives new events is rewritten once, an hour after the last). The table is
-- rebuilt in the new layout and swapped in (stop the aggregators first: npm run down drains them);
-- the horizon's TTL is set again at start-up (clickhouse/retention.ts).
CREATE TABLE IF NOT EXISTS {db}.dedup_events_next AS {db}.dedup_events
ENGINE = ReplacingMergeTree
PARTITION BY intDiv(ms, 86400000)
PRIMARY KEY (shard, ms)
ORDER BY (shard, ms, key, check)
SETTINGS index_granularity = 256, min_compress_block_size = 4096, max_compress_block_size = 8192,
         min_age_to_force_merge_seconds = 3600, min_age_to_force_merge_on_partition_only = 1;

INSERT INTO {db}.dedup_events_next SETTINGS max_partitions_per_insert_block = 10000 SELECT * FROM {db}.dedup_events;

EXCHANGE TABLES {db}.dedup_events AND {db}.dedup_events_next;

DROP TABLE IF EXISTS {db}.dedup_events_next;
