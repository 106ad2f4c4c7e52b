-- Coupons attached to a subscription (spec: CouponAssociation). subscription_line_item_id set:
-- the coupon discounts that line only; null: the whole invoice. Each association counts one
-- redemption of its coupon when it is created; redeemed_at is that instant, the one the
-- coupon's redemption window is checked against for every later invoice.
CREATE TABLE IF NOT EXISTS coupon_associations (
  id                         text PRIMARY KEY,
  tenant_id                  text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id             text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  coupon_id                  text NOT NULL REFERENCES coupons(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id            text NOT NULL REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_line_item_id  text REFERENCES subscription_line_items(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_phase_id      text,
  start_date                 timestamptz NOT NULL,
  end_date                   timestamptz,
  redeemed_at                timestamptz NOT NULL,
  status                     text NOT NULL DEFAULT 'published' CHECK (status IN ('published', 'deleted')),
  metadata                   jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  created_by                 text,
  updated_by                 text,
  CONSTRAINT coupon_associations_window CHECK (end_date IS NULL OR start_date < end_date)
);
CREATE INDEX IF NOT EXISTS coupon_associations_subscription ON coupon_associations (subscription_id) WHERE status = 'published';
