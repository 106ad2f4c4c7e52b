-- Invoice amounts: coupon discounts (at draft), applied taxes and prepaid credits (at
-- finalization). The invoices module migrates before coupons, taxes and wallets, so these
-- tables reference invoices only; coupon, association and tax ids are kept without FKs.
ALTER TABLE invoice_line_items
  ADD COLUMN IF NOT EXISTS line_item_discount numeric NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS invoice_level_discount numeric NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS prepaid_credits_applied numeric NOT NULL DEFAULT 0;

-- One row per coupon and line it discounted (invoice_line_item_id null: an invoice-level
-- coupon). Replaced wholesale when a DRAFT or SKIPPED invoice is recomputed.
CREATE TABLE IF NOT EXISTS coupon_applications (
  id                     text PRIMARY KEY,
  tenant_id              text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id         text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id             text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  invoice_line_item_id   text REFERENCES invoice_line_items(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  subscription_id        text,
  coupon_id              text NOT NULL,
  coupon_association_id  text,
  currency               text NOT NULL,
  applied_at             timestamptz NOT NULL,
  coupon_snapshot        jsonb NOT NULL DEFAULT '{}'::jsonb,
  discount_percentage    numeric,
  discounted_amount      numeric NOT NULL CHECK (discounted_amount >= 0),
  original_price         numeric NOT NULL,
  final_price            numeric NOT NULL,
  status                 text NOT NULL DEFAULT 'published',
  metadata               jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  created_by             text,
  updated_by             text
);
CREATE INDEX IF NOT EXISTS coupon_applications_invoice ON coupon_applications (invoice_id);
CREATE INDEX IF NOT EXISTS coupon_applications_association ON coupon_applications (coupon_association_id);

-- One row per invoice and tax association, written in the finalizing transaction. The key
-- (invoice id + tax association id) is unique, so a tax is never applied twice.
CREATE TABLE IF NOT EXISTS applied_taxes (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type         text NOT NULL DEFAULT 'invoice',
  entity_id           text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  tax_rate_id         text NOT NULL,
  tax_association_id  text NOT NULL,
  currency            text NOT NULL,
  idempotency_key     text NOT NULL,
  taxable_amount      numeric NOT NULL,
  tax_amount          numeric NOT NULL,
  applied_at          timestamptz NOT NULL,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text
);
CREATE UNIQUE INDEX IF NOT EXISTS applied_taxes_idempotency ON applied_taxes (tenant_id, environment_id, idempotency_key);
CREATE INDEX IF NOT EXISTS applied_taxes_entity ON applied_taxes (entity_id);
