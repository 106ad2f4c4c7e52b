-- Tax rates (spec: TaxRate) and the associations that attach them to customers, subscriptions
-- or the whole tenant. The CHECK constraints repeat the service's rules as a backstop.

CREATE TABLE tax_rates (
  id                text PRIMARY KEY,
  tenant_id         text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id    text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name              text NOT NULL,
  code              text NOT NULL,
  description       text,
  percentage_value  numeric,
  fixed_value       numeric,
  currency          text,
  status            text NOT NULL DEFAULT 'published',
  metadata          jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  created_by        text,
  updated_by        text,
  CONSTRAINT tax_rates_value CHECK (
    (percentage_value IS NOT NULL AND percentage_value >= 0 AND percentage_value <= 100 AND fixed_value IS NULL AND currency IS NULL)
    OR (fixed_value IS NOT NULL AND fixed_value >= 0 AND currency ~ '^[A-Z]{3}$' AND percentage_value IS NULL)
  ),
  CONSTRAINT tax_rates_status CHECK (status IN ('published', 'archived', 'deleted'))
);
CREATE UNIQUE INDEX tax_rates_code ON tax_rates (tenant_id, environment_id, code) WHERE status <> 'deleted';
CREATE INDEX tax_rates_scope ON tax_rates (tenant_id, environment_id, status, created_at);

CREATE TABLE tax_associations (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  tax_rate_id     text NOT NULL REFERENCES tax_rates(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type     text NOT NULL,
  entity_id       text NOT NULL,
  priority        integer NOT NULL DEFAULT 0,
  auto_apply      boolean NOT NULL DEFAULT true,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text,
  CONSTRAINT tax_associations_entity_type CHECK (entity_type IN ('customer', 'subscription', 'tenant')),
  CONSTRAINT tax_associations_priority CHECK (priority >= 0),
  CONSTRAINT tax_associations_status CHECK (status IN ('published', 'deleted'))
);
-- One live association per rate and entity; deleting it frees the pair again.
CREATE UNIQUE INDEX tax_associations_entity_rate ON tax_associations (tenant_id, environment_id, entity_type, entity_id, tax_rate_id)
  WHERE status <> 'deleted';
CREATE INDEX tax_associations_rate ON tax_associations (tax_rate_id) WHERE status <> 'deleted';
