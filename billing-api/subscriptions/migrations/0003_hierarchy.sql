-- Subscription hierarchies (parent, inherited, delegated invoicing).
-- invoices.subscription_customer_id: the subscription's own customer, which differs from
-- invoices.customer_id (who the invoice is issued to) for delegated invoicing. The invoices
-- table is foundation schema, so this module can extend it. Code sets the column on every
-- subscription invoice it writes; the trigger fills it for any writer that does not, so the
-- column is never NULL on a subscription invoice.
-- No FK: the value is the subscription's customer_id (itself a FK), and a deferred FK here would
-- queue trigger events on the backfill that block later migrations altering invoices.
ALTER TABLE invoices ADD COLUMN IF NOT EXISTS subscription_customer_id text;

CREATE OR REPLACE FUNCTION invoices_fill_subscription_customer() RETURNS trigger AS $$
BEGIN
  IF NEW.subscription_id IS NOT NULL AND NEW.subscription_customer_id IS NULL THEN
    SELECT customer_id INTO NEW.subscription_customer_id FROM subscriptions WHERE id = NEW.subscription_id;
  END IF;
  RETURN NEW;
END
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS invoices_fill_subscription_customer ON invoices;
CREATE TRIGGER invoices_fill_subscription_customer BEFORE INSERT ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoices_fill_subscription_customer();

CREATE INDEX IF NOT EXISTS invoices_subscription_customer ON invoices (tenant_id, environment_id, subscription_customer_id)
  WHERE subscription_customer_id IS NOT NULL;

-- Errors 8 lookups: a customer's live subscriptions by type.
CREATE INDEX IF NOT EXISTS subscriptions_customer_type ON subscriptions (tenant_id, environment_id, customer_id, subscription_type)
  WHERE status = 'published';

UPDATE invoices i SET subscription_customer_id = s.customer_id
  FROM subscriptions s WHERE i.subscription_id = s.id AND i.subscription_customer_id IS NULL;
