-- Credit grant applications (spec: "Credit grant application"): one row per grant, subscription
-- and grant period. The idempotency key grant:subscription:period_start is unique, so the
-- application job can insert the due periods with ON CONFLICT DO NOTHING on every run; the same
-- key is the wallet top-up's idempotency key, so an application never credits twice.
CREATE TABLE credit_grant_applications (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  credit_grant_id     text NOT NULL REFERENCES credit_grants(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id     text NOT NULL REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  credits             numeric NOT NULL CHECK (credits > 0),
  scheduled_for       timestamptz NOT NULL,
  applied_at          timestamptz,
  period_start        timestamptz NOT NULL,
  period_end          timestamptz,
  application_status  text NOT NULL DEFAULT 'PENDING' CHECK (application_status IN ('PENDING', 'APPLIED', 'FAILED', 'SKIPPED')),
  failure_reason      text,
  retry_count         integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
  idempotency_key     text NOT NULL,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text,
  CHECK ((application_status = 'APPLIED') = (applied_at IS NOT NULL))
);
CREATE UNIQUE INDEX credit_grant_applications_idempotency ON credit_grant_applications (idempotency_key);
CREATE INDEX credit_grant_applications_subscription
  ON credit_grant_applications (tenant_id, environment_id, subscription_id, scheduled_for);
