-- Wallets and their ledger. A wallet's balance is never stored: it is derived from the ledger
-- rows (credits' remaining credits_available minus debits' credits_unfunded). The CHECKs repeat
-- the service's rules so that no write path can leave a ledger that does not balance.
CREATE TABLE wallets (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id      text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  currency         text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
  name             text NOT NULL,
  wallet_type      text NOT NULL CHECK (wallet_type IN ('PREPAID', 'POSTPAID')),
  conversion_rate  numeric NOT NULL CHECK (conversion_rate > 0),
  status           text NOT NULL DEFAULT 'published' CHECK (status IN ('published', 'archived', 'deleted')),
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text
);
-- One live wallet per customer and currency.
CREATE UNIQUE INDEX wallets_customer_currency ON wallets (tenant_id, environment_id, customer_id, currency) WHERE status <> 'deleted';
CREATE INDEX wallets_scope ON wallets (tenant_id, environment_id, status, created_at);

-- Ledger rows. credit_amount is the (positive) number of credits the row moves:
--   credit: credits added; credits_available is what is left of them (debits and expiry reduce it);
--   debit:  credits taken; consumed from credits, plus credits_unfunded when a POSTPAID wallet
--           goes below zero (the shortfall, consuming no credit);
--   expiry: the remaining credits of one expired credit row, written once (key expiry:<credit id>).
CREATE TABLE wallet_transactions (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  wallet_id           text NOT NULL REFERENCES wallets(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id         text NOT NULL,
  type                text NOT NULL CHECK (type IN ('credit', 'debit', 'expiry')),
  transaction_reason  text,
  credit_amount       numeric NOT NULL CHECK (credit_amount > 0),
  credits_available   numeric NOT NULL DEFAULT 0 CHECK (credits_available >= 0 AND credits_available <= credit_amount),
  credits_unfunded    numeric NOT NULL DEFAULT 0 CHECK (credits_unfunded >= 0 AND credits_unfunded <= credit_amount),
  amount              numeric NOT NULL CHECK (amount >= 0),
  conversion_rate     numeric NOT NULL CHECK (conversion_rate > 0),
  expiry_date         timestamptz,
  priority            integer,
  idempotency_key     text NOT NULL CHECK (idempotency_key <> ''),
  reference           text,
  consumed            jsonb NOT NULL DEFAULT '[]'::jsonb,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text,
  CONSTRAINT wallet_transactions_reason CHECK (
    (type = 'credit' AND transaction_reason IN ('PURCHASED', 'FREE_CREDIT', 'PROMOTIONAL'))
    OR (type = 'debit' AND transaction_reason = 'USAGE')
    OR (type = 'expiry' AND transaction_reason = 'CREDIT_EXPIRED')
  ),
  CONSTRAINT wallet_transactions_available CHECK (type = 'credit' OR credits_available = 0),
  CONSTRAINT wallet_transactions_unfunded CHECK (type = 'debit' OR credits_unfunded = 0)
);
-- Idempotency: a key is used once per wallet (spec Errors 2: a duplicate is a 409).
CREATE UNIQUE INDEX wallet_transactions_idempotency ON wallet_transactions (wallet_id, idempotency_key);
CREATE INDEX wallet_transactions_wallet ON wallet_transactions (wallet_id, created_at DESC, id DESC);
CREATE INDEX wallet_transactions_expiring ON wallet_transactions (expiry_date)
  WHERE type = 'credit' AND credits_available > 0 AND expiry_date IS NOT NULL;
