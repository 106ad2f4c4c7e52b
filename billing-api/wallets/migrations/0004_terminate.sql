-- Wallet termination (terminate.ts): a terminated wallet is kept as 'archived' (closed), readable
-- with its ledger, and its remaining credits are forfeited by one 'expiry' row per credit with
-- reason WALLET_TERMINATED. A closed wallet no longer holds its customer's currency: a new
-- wallet in that currency may be created, so uniqueness covers live (published) wallets only.
DROP INDEX IF EXISTS wallets_customer_currency;
CREATE UNIQUE INDEX wallets_customer_currency ON wallets (tenant_id, environment_id, customer_id, currency) WHERE status = 'published';

ALTER TABLE wallet_transactions DROP CONSTRAINT wallet_transactions_reason;
ALTER TABLE wallet_transactions ADD CONSTRAINT wallet_transactions_reason CHECK (
  (type = 'credit' AND transaction_reason IN ('PURCHASED', 'FREE_CREDIT', 'PROMOTIONAL'))
  OR (type = 'debit' AND transaction_reason = 'USAGE')
  OR (type = 'expiry' AND transaction_reason IN ('CREDIT_EXPIRED', 'WALLET_TERMINATED'))
);
