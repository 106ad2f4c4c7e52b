-- Every subscription invoice is now written by invoices/subscription-invoice-rows.ts, which sets
-- subscription_customer_id itself: the fill-in trigger of 0003_hierarchy is no longer needed.
DROP TRIGGER IF EXISTS invoices_fill_subscription_customer ON invoices;
DROP FUNCTION IF EXISTS invoices_fill_subscription_customer();
