-- The usage quantity an invoice line was priced on after entitlement hard limits (spec:
-- InvoiceLineItem.adjusted_entitlement_quantity); null on lines that are not usage lines.
ALTER TABLE invoice_line_items ADD COLUMN IF NOT EXISTS adjusted_entitlement_quantity numeric;
