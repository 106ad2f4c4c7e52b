-- Usage alerts: which alert level of a feature already fired for a customer in a usage reset
-- period. The unique key makes a re-check (or two schedulers at once) fire nothing twice; a
-- new period has a new period_start, so crossing the same threshold then fires again.
CREATE TABLE usage_alert_states (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  feature_id      text NOT NULL REFERENCES features(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id     text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  period_start    timestamptz NOT NULL,
  period_end      timestamptz,
  level           text NOT NULL CHECK (level IN ('info', 'warning', 'critical')),
  threshold       numeric NOT NULL,
  usage           numeric NOT NULL,
  system_event_id text NOT NULL,
  fired_at        timestamptz NOT NULL
);
CREATE UNIQUE INDEX usage_alert_states_once ON usage_alert_states (tenant_id, environment_id, feature_id, customer_id, period_start, level);
