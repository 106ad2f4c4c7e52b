-- Pricing units (spec: PricingUnit): a custom unit such as "credit" that prices are written in,
-- worth conversion_rate of base_currency per unit.
CREATE TABLE pricing_units (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name             text NOT NULL,
  code             text NOT NULL,
  symbol           text,
  base_currency    text NOT NULL,
  conversion_rate  numeric NOT NULL CHECK (conversion_rate > 0),
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text
);
CREATE UNIQUE INDEX pricing_units_code ON pricing_units (tenant_id, environment_id, code) WHERE status <> 'deleted';
