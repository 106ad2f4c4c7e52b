-- Balance alert and auto top-up settings of a wallet (wallets/auto-topup.ts).
-- alert_threshold is in credits, like the balance. alert_state is 'armed' until a debit takes
-- the balance below the threshold ('alerted': wallet.balance_alert was published); it is armed
-- again by a credit that lifts the balance to the threshold or above, and re-evaluated when a
-- purchased-credit (top-up invoice) payment completes. The auto top-up fires on the alert.
ALTER TABLE wallets
  ADD COLUMN IF NOT EXISTS alert_threshold numeric,
  ADD COLUMN IF NOT EXISTS alert_state text NOT NULL DEFAULT 'armed',
  ADD COLUMN IF NOT EXISTS auto_topup_enabled boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS auto_topup_amount numeric,
  ADD COLUMN IF NOT EXISTS auto_topup_mode text;

ALTER TABLE wallets DROP CONSTRAINT IF EXISTS wallets_alert_state;
ALTER TABLE wallets ADD CONSTRAINT wallets_alert_state CHECK (alert_state IN ('armed', 'alerted'));
ALTER TABLE wallets DROP CONSTRAINT IF EXISTS wallets_auto_topup;
ALTER TABLE wallets ADD CONSTRAINT wallets_auto_topup CHECK (
  (auto_topup_amount IS NULL OR auto_topup_amount > 0)
  AND (auto_topup_mode IS NULL OR auto_topup_mode IN ('invoiced', 'instant'))
  AND (NOT auto_topup_enabled OR (alert_threshold IS NOT NULL AND auto_topup_amount IS NOT NULL AND auto_topup_mode IS NOT NULL))
);

-- Top-up invoices name their wallet in metadata.wallet_id; the "unpaid top-up blocks another"
-- check reads them by wallet.
CREATE INDEX IF NOT EXISTS invoices_wallet_topups ON invoices ((metadata->>'wallet_id'))
  WHERE billing_reason = 'WALLET_AUTO_TOPUP';
