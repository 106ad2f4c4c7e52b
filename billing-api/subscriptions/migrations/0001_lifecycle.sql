-- Subscription lifecycle: types and hierarchy, trials, collection, thresholds, commitments,
-- price sync and cancellation. Defaults keep existing rows valid (STANDALONE, automatic collection).
ALTER TABLE subscriptions
  ADD COLUMN subscription_type       text    NOT NULL DEFAULT 'STANDALONE'
    CHECK (subscription_type IN ('STANDALONE', 'PARENT', 'INHERITED', 'DELEGATED_INVOICING')),
  ADD COLUMN parent_subscription_id  text REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  ADD COLUMN invoicing_customer_id   text REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  ADD COLUMN trial_start             timestamptz,
  ADD COLUMN trial_end               timestamptz,
  ADD COLUMN collection_method       text    NOT NULL DEFAULT 'charge_automatically'
    CHECK (collection_method IN ('charge_automatically', 'send_invoice')),
  ADD COLUMN payment_behavior        text    NOT NULL DEFAULT 'default_active',
  ADD COLUMN auto_invoice_threshold  numeric CHECK (auto_invoice_threshold >= 0),
  ADD COLUMN commitment_amount       numeric CHECK (commitment_amount >= 0),
  ADD COLUMN overage_factor          numeric CHECK (overage_factor >= 0),
  ADD COLUMN enable_true_up          boolean NOT NULL DEFAULT false,
  ADD COLUMN synced_price_sequence   integer NOT NULL DEFAULT 0,
  ADD COLUMN cancellation_type       text
    CHECK (cancellation_type IN ('immediate', 'scheduled_date', 'end_of_period')),
  ADD COLUMN lookup_key              text,
  ADD CONSTRAINT subscriptions_trial_order CHECK (trial_start IS NULL OR trial_end IS NULL OR trial_start <= trial_end);

CREATE INDEX subscriptions_list ON subscriptions (tenant_id, environment_id, subscription_status, subscription_type);
-- The billing schedule's other claims: scheduled terminations and trial ends.
CREATE INDEX subscriptions_cancel_due ON subscriptions (subscription_status, cancel_at) WHERE cancel_at IS NOT NULL;
CREATE INDEX subscriptions_trial_due ON subscriptions (subscription_status, trial_end) WHERE trial_end IS NOT NULL;
CREATE INDEX subscriptions_parent ON subscriptions (parent_subscription_id) WHERE parent_subscription_id IS NOT NULL;
