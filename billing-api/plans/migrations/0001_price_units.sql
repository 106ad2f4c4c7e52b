-- Prices written in a pricing unit (spec: Price.price_unit*). The price keeps its own copy of
-- the unit's code and conversion rate, so later changes to the unit never reprice it. No
-- foreign key on price_unit_id: pricing_units belongs to a module migrated after this one,
-- and units are only ever archived, never removed.
ALTER TABLE prices
  ADD COLUMN price_unit        text,
  ADD COLUMN price_unit_id     text,
  ADD COLUMN price_unit_amount numeric,
  ADD COLUMN price_unit_tiers  jsonb,
  ADD COLUMN conversion_rate   numeric;
