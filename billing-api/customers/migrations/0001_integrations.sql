-- A customer's record at an external provider (spec: CustomerIntegration), read into the
-- customer response. One link per provider per customer.
CREATE TABLE customer_integrations (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_id           text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  provider_type       text NOT NULL,
  provider_entity_id  text NOT NULL,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text
);
CREATE UNIQUE INDEX customer_integrations_provider ON customer_integrations (tenant_id, environment_id, entity_id, provider_type)
  WHERE status <> 'deleted';
