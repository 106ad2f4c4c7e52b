-- Entitlements: a feature granted by a plan or an add-on (entity_type, entity_id). entity_id
-- points at plans or addons depending on entity_type, so it has no foreign key; the service
-- checks it. usage_reset_period is our name for the spec's unnamed usage reset field.
CREATE TABLE entitlements (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type         text NOT NULL CHECK (entity_type IN ('PLAN', 'ADDON')),
  entity_id           text NOT NULL,
  feature_id          text NOT NULL REFERENCES features(id) DEFERRABLE INITIALLY DEFERRED,
  is_enabled          boolean NOT NULL DEFAULT true,
  usage_limit         bigint CHECK (usage_limit >= 0),
  is_soft_limit       boolean NOT NULL DEFAULT false,
  static_value        text,
  usage_reset_period  text CHECK (usage_reset_period IN ('DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY', 'NEVER')),
  display_order       integer NOT NULL DEFAULT 0,
  start_date          timestamptz,
  end_date            timestamptz,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text,
  CHECK (end_date IS NULL OR start_date IS NULL OR end_date > start_date)
);
-- One live entitlement per (plan or add-on, feature); deleting one frees the pair.
CREATE UNIQUE INDEX entitlements_entity_feature ON entitlements (tenant_id, environment_id, entity_type, entity_id, feature_id)
  WHERE status <> 'deleted';
CREATE INDEX entitlements_feature ON entitlements (tenant_id, environment_id, feature_id);
