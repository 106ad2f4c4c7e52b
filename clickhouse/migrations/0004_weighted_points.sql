-- WEIGHTED_SUM meters (time-weighted: a value holds until the customer's next event): each
-- bucket keeps its points, the exact set of (timestamp, event_id, value) of the events in it,
-- from which a read integrates the step function over any range (queries/weighted-usage.ts).
-- Empty for every other aggregation. A set, so a replayed row merges away like `uniq`.
ALTER TABLE {db}.meter_buckets
    ADD COLUMN IF NOT EXISTS points SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(DateTime64(3, 'UTC'), String, Decimal(38, 12))));
