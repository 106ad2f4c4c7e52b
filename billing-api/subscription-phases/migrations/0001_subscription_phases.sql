-- Subscription phases: a schedule of line-item sets (and coupons), each taking over at its start.
CREATE TABLE subscription_phases (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id  text NOT NULL REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  start_date       timestamptz NOT NULL,
  -- the next phase's start; null for the last phase
  end_date         timestamptz,
  line_items       jsonb NOT NULL,
  coupon_ids       jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- when the phase's line items replaced the previous ones
  applied_at       timestamptz,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text
);
CREATE UNIQUE INDEX subscription_phases_start ON subscription_phases (subscription_id, start_date) WHERE status <> 'deleted';
CREATE INDEX subscription_phases_due ON subscription_phases (start_date) WHERE applied_at IS NULL AND status = 'published';

ALTER TABLE subscription_line_items ADD COLUMN subscription_phase_id text;
