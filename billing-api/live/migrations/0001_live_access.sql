-- Live access (billing-api/live/): cross-process invalidation of the check's cache, and the
-- spend caps that fired.
--
-- Every change to a record the live check caches notifies the channel `meterline_live` after
-- its transaction commits (NOTIFY is transactional): `table|tenant_id|environment_id|customer_id`
-- (the customer's own id for customers; empty for records that have no customer). Each API process LISTENs and drops what the
-- change may have affected, whichever process or script wrote it.
CREATE OR REPLACE FUNCTION meterline_live_notify() RETURNS trigger AS $$
DECLARE
  r jsonb;
BEGIN
  IF TG_OP = 'DELETE' THEN r := to_jsonb(OLD); ELSE r := to_jsonb(NEW); END IF;
  PERFORM pg_notify('meterline_live', TG_TABLE_NAME || '|' || coalesce(r->>'tenant_id', '') || '|'
    || coalesce(r->>'environment_id', '') || '|'
    || coalesce(CASE WHEN TG_TABLE_NAME = 'customers' THEN r->>'id' ELSE r->>'customer_id' END, ''));
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['customers', 'subscriptions', 'addon_associations', 'entitlements', 'features', 'meters', 'wallets', 'wallet_transactions'] LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS %I ON %I', t || '_live_notify', t);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION meterline_live_notify()', t || '_live_notify', t);
  END LOOP;
END;
$$;

-- A hard limit crossed: one row per (subject, customer, period, level), whichever API process
-- saw it first. The row and its system event (feature.usage_limit_reached or
-- wallet.balance_depleted) commit together, so the event fires exactly once.
CREATE TABLE spend_cap_events (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  kind            text NOT NULL CHECK (kind IN ('feature_usage', 'wallet_balance')),
  -- the feature (feature_usage) or the wallet (wallet_balance)
  subject_id      text NOT NULL,
  customer_id     text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  period_start    timestamptz NOT NULL,
  period_end      timestamptz,
  level           text NOT NULL,
  -- the limit and the value that crossed it (decimal strings: usage, or the live balance)
  threshold       numeric NOT NULL,
  observed        numeric NOT NULL,
  system_event_id text NOT NULL,
  fired_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX spend_cap_events_once ON spend_cap_events (tenant_id, environment_id, kind, subject_id, customer_id, period_start, level);
