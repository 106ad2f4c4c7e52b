-- Usage analytics of usage lines (spec: InvoiceLineItem usage_analytics, usage_breakdown):
-- lists of {source | grouped_by, usage, cost, percentage, event_count}, written with the line
-- (invoices/usage-analytics.ts). null: not a usage line (analytics), or no meter group_by (breakdown).
ALTER TABLE invoice_line_items
  ADD COLUMN IF NOT EXISTS usage_analytics jsonb,
  ADD COLUMN IF NOT EXISTS usage_breakdown jsonb;
