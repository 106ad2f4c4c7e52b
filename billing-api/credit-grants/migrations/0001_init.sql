-- Credit grant definitions (spec: CreditGrant), attached to a plan or to one subscription.
-- Applying them to subscriptions per period is a later step.
CREATE TABLE credit_grants (
  id                        text PRIMARY KEY,
  tenant_id                 text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id            text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name                      text NOT NULL,
  plan_id                   text REFERENCES plans(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id           text REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  credits                   numeric NOT NULL CHECK (credits > 0),
  conversion_rate           numeric CHECK (conversion_rate > 0),
  topup_conversion_rate     numeric CHECK (topup_conversion_rate > 0),
  credit_grant_anchor       timestamptz,
  start_date                timestamptz,
  end_date                  timestamptz,
  expiration_duration       integer CHECK (expiration_duration >= 0),
  expiration_duration_unit  text,
  period                    text NOT NULL,
  period_count              integer NOT NULL DEFAULT 1 CHECK (period_count >= 1),
  priority                  integer NOT NULL DEFAULT 0,
  status                    text NOT NULL DEFAULT 'published',
  metadata                  jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  created_by                text,
  updated_by                text,
  CHECK ((plan_id IS NULL) <> (subscription_id IS NULL)),
  CHECK ((expiration_duration IS NULL) = (expiration_duration_unit IS NULL))
);
CREATE INDEX credit_grants_plan ON credit_grants (tenant_id, environment_id, plan_id) WHERE plan_id IS NOT NULL;
CREATE INDEX credit_grants_subscription ON credit_grants (tenant_id, environment_id, subscription_id) WHERE subscription_id IS NOT NULL;
