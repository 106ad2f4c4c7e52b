-- Line item commitments (issue #4). A commitment is a committed spend: commitment_amount, or
-- commitment_quantity priced at the line's price. Time buckets live on the line item's price
-- override ({"commitment_time_buckets": [{start:{hour,minute}, end:{hour,minute}}]}).
ALTER TABLE subscription_line_items
  ADD COLUMN IF NOT EXISTS commitment_amount          numeric CHECK (commitment_amount >= 0),
  ADD COLUMN IF NOT EXISTS commitment_quantity        numeric CHECK (commitment_quantity >= 0),
  ADD COLUMN IF NOT EXISTS commitment_overage_factor  numeric CHECK (commitment_overage_factor >= 1),
  ADD COLUMN IF NOT EXISTS commitment_true_up_enabled boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS commitment_windowed        boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS price_override             jsonb;
