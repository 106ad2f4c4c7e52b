-- Coupons (spec: Coupon). The CHECK constraints repeat the service's rules so that no write path,
-- including the atomic redemption UPDATE, can leave a coupon the discount math cannot handle.

CREATE TABLE coupons (
  id                   text PRIMARY KEY,
  tenant_id            text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id       text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name                 text NOT NULL,
  type                 text NOT NULL,
  amount_off           numeric,
  percentage_off       numeric,
  currency             text,
  duration             text NOT NULL,
  duration_in_periods  integer,
  max_redemptions      integer,
  total_redemptions    integer NOT NULL DEFAULT 0,
  redeem_after         timestamptz,
  redeem_before        timestamptz,
  rules                jsonb NOT NULL DEFAULT '{}'::jsonb,
  status               text NOT NULL DEFAULT 'published',
  metadata             jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  created_by           text,
  updated_by           text,
  CONSTRAINT coupons_type_terms CHECK (
    (type = 'fixed' AND amount_off > 0 AND currency ~ '^[A-Z]{3}$' AND percentage_off IS NULL)
    OR (type = 'percentage' AND percentage_off > 0 AND percentage_off <= 100 AND amount_off IS NULL AND currency IS NULL)
  ),
  CONSTRAINT coupons_duration CHECK (
    duration IN ('once', 'repeating', 'forever')
    AND (duration = 'repeating') = (duration_in_periods IS NOT NULL)
    AND (duration_in_periods IS NULL OR duration_in_periods >= 1)
  ),
  CONSTRAINT coupons_redemptions CHECK (
    total_redemptions >= 0
    AND (max_redemptions IS NULL OR (max_redemptions >= 1 AND total_redemptions <= max_redemptions))
  ),
  CONSTRAINT coupons_window CHECK (redeem_after IS NULL OR redeem_before IS NULL OR redeem_after < redeem_before),
  CONSTRAINT coupons_status CHECK (status IN ('published', 'archived', 'deleted'))
);
CREATE INDEX coupons_scope ON coupons (tenant_id, environment_id, status, created_at);
