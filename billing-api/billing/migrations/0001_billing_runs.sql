-- The progress of a billing run (the subscription-billing job): one row per run, keyed by the
-- job (a retried or stalled job continues its row). Counters move in the same transaction as
-- the batch they count, so they are true after any crash.
CREATE TABLE billing_runs (
  id text PRIMARY KEY,
  job_name text NOT NULL,
  tenant_id text,
  state text NOT NULL DEFAULT 'running',
  attempts integer NOT NULL DEFAULT 1,
  started_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  -- subscriptions due when the run (or its last attempt) started
  total integer NOT NULL DEFAULT 0,
  subscriptions integer NOT NULL DEFAULT 0,
  invoices integer NOT NULL DEFAULT 0,
  conflicts integer NOT NULL DEFAULT 0,
  batches integer NOT NULL DEFAULT 0,
  watermark timestamptz
);
CREATE INDEX billing_runs_started ON billing_runs (started_at DESC);

-- A subscription whose invoice failed to compute in a run: skipped for the rest of the run
-- (not advanced, billed by the next run), counted once however often it is retried.
CREATE TABLE billing_run_failures (
  run_id text NOT NULL REFERENCES billing_runs (id) ON DELETE CASCADE,
  subscription_id text NOT NULL,
  error text NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, subscription_id)
);
