-- Meters: rounding of the aggregated quantity where usage is read, and the bucket size that
-- commitment time buckets follow (HOUR: whole hours only; MINUTE: hours and minutes).
ALTER TABLE meters ADD COLUMN IF NOT EXISTS rounding jsonb;
ALTER TABLE meters ADD COLUMN IF NOT EXISTS bucket_size text NOT NULL DEFAULT 'HOUR';
