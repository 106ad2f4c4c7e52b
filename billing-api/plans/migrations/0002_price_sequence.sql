-- The plan's price counter: each price added to a plan takes the next value, under the plan's
-- row lock. It never goes down, so an archived price's number is never reused, and a
-- subscription's synced_price_sequence stays comparable with it.
ALTER TABLE plans ADD COLUMN max_price_sequence integer NOT NULL DEFAULT 0;

UPDATE plans p
   SET max_price_sequence = s.max_sequence
  FROM (SELECT entity_id, max(sequence) AS max_sequence FROM prices WHERE entity_type = 'PLAN' GROUP BY entity_id) s
 WHERE s.entity_id = p.id;
