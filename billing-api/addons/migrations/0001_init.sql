-- Add-ons: bought on top of a plan. Their prices are rows of prices with entity_type 'ADDON';
-- their features are entitlements with entity_type 'ADDON'.
CREATE TABLE addons (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  lookup_key      text NOT NULL,
  description     text,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
-- Archived add-ons keep their key: subscriptions may still refer to it.
CREATE UNIQUE INDEX addons_lookup_key ON addons (tenant_id, environment_id, lookup_key) WHERE status <> 'deleted';
