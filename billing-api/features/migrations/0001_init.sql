-- Features: what a plan or add-on grants. Metered features count usage through a meter.
-- group_id's foreign key is added by the groups module, whose table is created after this one.
CREATE TABLE features (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  lookup_key      text NOT NULL,
  description     text,
  type            text NOT NULL CHECK (type IN ('metered', 'boolean', 'static')),
  meter_id        text REFERENCES meters(id) DEFERRABLE INITIALLY DEFERRED,
  group_id        text,
  unit_singular   text,
  unit_plural     text,
  alert_settings  jsonb,
  reporting_unit  jsonb,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text,
  CHECK ((type = 'metered') = (meter_id IS NOT NULL))
);
-- Archived features keep their key: entitlements and clients may still refer to it.
CREATE UNIQUE INDEX features_lookup_key ON features (tenant_id, environment_id, lookup_key) WHERE status <> 'deleted';
CREATE INDEX features_meter ON features (tenant_id, environment_id, meter_id) WHERE meter_id IS NOT NULL;
CREATE INDEX features_group ON features (group_id) WHERE group_id IS NOT NULL;
