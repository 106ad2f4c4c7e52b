-- Invoice states and payments (finalization, void, payments).

-- Per-environment invoice number counter. next_value is the number the next finalized
-- invoice takes; finalization increments it with an UPDATE ... RETURNING inside its own
-- transaction, so the row lock serialises concurrent finalizations and a rolled-back
-- finalization gives its number back. Numbers are never reused: a voided invoice keeps its.
CREATE TABLE invoice_sequences (
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  next_value      bigint NOT NULL DEFAULT 1,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, environment_id)
);

-- Per-subscription counter of finalized invoices: billing_sequence is the invoice's ordinal
-- among its subscription's finalized invoices (1, 2, ...).
CREATE TABLE invoice_billing_sequences (
  subscription_id text PRIMARY KEY REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  next_value      integer NOT NULL DEFAULT 1,
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX invoices_number ON invoices (tenant_id, environment_id, invoice_number)
  WHERE invoice_number IS NOT NULL;
-- The finalization job's scan: drafts by age.
CREATE INDEX invoices_drafts_due ON invoices (last_computed_at) WHERE invoice_status = 'DRAFT';

-- One row per recorded payment. A client's idempotency key is unique per invoice, so a
-- retried payment is refused (409) and never applied twice.
CREATE TABLE invoice_payments (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id       text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  amount           numeric NOT NULL CHECK (amount > 0),
  currency         text NOT NULL,
  reference        text,
  idempotency_key  text,
  paid_at          timestamptz NOT NULL,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text
);
CREATE INDEX invoice_payments_invoice ON invoice_payments (invoice_id);
CREATE UNIQUE INDEX invoice_payments_idempotency ON invoice_payments (tenant_id, environment_id, invoice_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
