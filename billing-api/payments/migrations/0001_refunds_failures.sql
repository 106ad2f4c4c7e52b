-- Refunds and failed payment attempts of invoices (billing-api/payments).

-- One row per refund. The client's idempotency key is unique per invoice: a retried refund
-- finds its first row and applies nothing again. credit_note_id is the CREDIT invoice that
-- records the credited part (null when the refund only returned an overpayment).
CREATE TABLE invoice_refunds (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id       text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  payment_id       text REFERENCES invoice_payments(id) DEFERRABLE INITIALLY DEFERRED,
  amount           numeric NOT NULL CHECK (amount > 0),
  -- the part that returned an overpayment, and the part the credit note credits; they sum to amount
  excess_amount    numeric NOT NULL CHECK (excess_amount >= 0),
  credited_amount  numeric NOT NULL CHECK (credited_amount >= 0),
  currency         text NOT NULL,
  reason           text,
  reference        text,
  idempotency_key  text,
  credit_note_id   text REFERENCES invoices(id) DEFERRABLE INITIALLY DEFERRED,
  refunded_at      timestamptz NOT NULL,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text,
  CHECK (excess_amount + credited_amount = amount)
);
CREATE INDEX invoice_refunds_invoice ON invoice_refunds (invoice_id);
CREATE UNIQUE INDEX invoice_refunds_idempotency ON invoice_refunds (tenant_id, environment_id, invoice_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

-- One row per failed payment attempt. attempt counts the invoice's failures (1, 2, ...);
-- next_retry_at is when the dunning schedule retries (null once the schedule is exhausted).
CREATE TABLE invoice_payment_failures (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id       text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  attempt          integer NOT NULL CHECK (attempt > 0),
  failure_code     text,
  reason           text,
  idempotency_key  text,
  failed_at        timestamptz NOT NULL,
  next_retry_at    timestamptz,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text,
  UNIQUE (invoice_id, attempt)
);
CREATE UNIQUE INDEX invoice_payment_failures_idempotency ON invoice_payment_failures (tenant_id, environment_id, invoice_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
