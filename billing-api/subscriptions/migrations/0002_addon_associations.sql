-- Add-ons attached to a subscription (modify change types addon_attach / addon_detach) and the
-- multi-cadence cancellation strategies. The addons module is registered after this one, so
-- addon_id has no foreign key.
CREATE TABLE IF NOT EXISTS addon_associations (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id  text NOT NULL REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  addon_id         text NOT NULL,
  start_date       timestamptz NOT NULL,
  end_date         timestamptz,
  addon_status     text NOT NULL DEFAULT 'active' CHECK (addon_status IN ('active', 'cancelled')),
  cancelled_at     timestamptz,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text,
  CONSTRAINT addon_associations_dates CHECK (end_date IS NULL OR end_date > start_date)
);
CREATE INDEX IF NOT EXISTS addon_associations_sub ON addon_associations (subscription_id);
-- One active attachment of an add-on per subscription: a concurrent second attach loses here.
CREATE UNIQUE INDEX IF NOT EXISTS addon_associations_active ON addon_associations (subscription_id, addon_id)
  WHERE addon_status = 'active' AND status <> 'deleted';

ALTER TABLE subscription_line_items
  ADD COLUMN IF NOT EXISTS addon_association_id text REFERENCES addon_associations(id) DEFERRABLE INITIALLY DEFERRED;

ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS subscriptions_cancellation_type_check;
ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_cancellation_type_check
  CHECK (cancellation_type IN ('immediate', 'scheduled_date', 'end_of_period', 'minimum_period_end', 'maximum_period_end'));
