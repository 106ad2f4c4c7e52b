-- The commitment applied to an invoice line (spec: InvoiceLineItem.commitment_info); null
-- when the line carries no commitment.
ALTER TABLE invoice_line_items ADD COLUMN IF NOT EXISTS commitment_info jsonb;
