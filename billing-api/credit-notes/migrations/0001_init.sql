-- Credit notes (billing-api/credit-notes): a document that credits part of a FINALIZED invoice.
-- DRAFT notes reserve what they credit; a FINALIZED note has lowered the invoice's amount_due and
-- amount_remaining and raised its adjustment_amount by total_amount; a VOIDED note was a draft
-- that was cancelled (it never changed the invoice).
CREATE TABLE credit_notes (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id          text NOT NULL REFERENCES invoices(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id         text NOT NULL,
  subscription_id     text,
  credit_note_number  text NOT NULL CHECK (credit_note_number <> ''),
  credit_note_status  text NOT NULL CHECK (credit_note_status IN ('DRAFT', 'FINALIZED', 'VOIDED')),
  credit_note_type    text NOT NULL CHECK (credit_note_type = 'ADJUSTMENT'),
  reason              text NOT NULL CHECK (reason IN ('DUPLICATE', 'FRAUDULENT', 'ORDER_CHANGE', 'UNSATISFACTORY', 'SERVICE_ISSUE', 'BILLING_ERROR', 'SUBSCRIPTION_CANCELLATION')),
  memo                text,
  currency            text NOT NULL,
  total_amount        numeric NOT NULL CHECK (total_amount > 0),
  idempotency_key     text,
  finalized_at        timestamptz,
  voided_at           timestamptz,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text,
  CHECK ((credit_note_status = 'FINALIZED') = (finalized_at IS NOT NULL)),
  CHECK ((credit_note_status = 'VOIDED') = (voided_at IS NOT NULL))
);
CREATE UNIQUE INDEX credit_notes_number ON credit_notes (tenant_id, environment_id, credit_note_number);
CREATE UNIQUE INDEX credit_notes_idempotency ON credit_notes (tenant_id, environment_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id, credit_note_status);

CREATE TABLE credit_note_line_items (
  id                    text PRIMARY KEY,
  tenant_id             text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id        text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  credit_note_id        text NOT NULL REFERENCES credit_notes(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  invoice_line_item_id  text NOT NULL REFERENCES invoice_line_items(id) DEFERRABLE INITIALLY DEFERRED,
  display_name          text,
  amount                numeric NOT NULL CHECK (amount > 0),
  currency              text NOT NULL,
  status                text NOT NULL DEFAULT 'published',
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  created_by            text,
  updated_by            text
);
CREATE INDEX credit_note_line_items_note ON credit_note_line_items (credit_note_id);
CREATE INDEX credit_note_line_items_invoice_line ON credit_note_line_items (invoice_line_item_id);
