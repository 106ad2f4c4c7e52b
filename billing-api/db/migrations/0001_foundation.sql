-- Foundation: tenancy, access, meters and the minimal billing path.
-- Every tenant-owned table carries tenant_id and environment_id; every query filters on both.
-- Foreign keys are checked at commit (DEFERRABLE INITIALLY DEFERRED): the ORM's unit of work
-- inserts related rows of one transaction in any order.

CREATE TABLE tenants (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  status          text NOT NULL DEFAULT 'published',
  billing_details jsonb NOT NULL DEFAULT '{}'::jsonb,
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE environments (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  name        text NOT NULL,
  type        text NOT NULL,
  status      text NOT NULL DEFAULT 'published',
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text,
  updated_by  text
);
CREATE UNIQUE INDEX environments_tenant_name ON environments (tenant_id, name) WHERE status <> 'deleted';

CREATE TABLE users (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  name        text,
  email       text,
  type        text NOT NULL DEFAULT 'service_account',
  roles       jsonb NOT NULL DEFAULT '[]'::jsonb,
  status      text NOT NULL DEFAULT 'published',
  metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text,
  updated_by  text
);
CREATE INDEX users_tenant ON users (tenant_id);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  user_id         text NOT NULL REFERENCES users(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  key_hash        text NOT NULL UNIQUE,
  display_id      text NOT NULL,
  status          text NOT NULL DEFAULT 'published',
  expires_at      timestamptz,
  last_used_at    timestamptz,
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE INDEX api_keys_user ON api_keys (tenant_id, user_id);

CREATE TABLE meters (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  event_name      text NOT NULL,
  aggregation     jsonb NOT NULL,
  filters         jsonb NOT NULL DEFAULT '[]'::jsonb,
  reset_usage     text NOT NULL DEFAULT 'BILLING_PERIOD',
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE INDEX meters_scope ON meters (tenant_id, environment_id, event_name);
CREATE INDEX meters_updated ON meters (updated_at);

CREATE TABLE customers (
  id                   text PRIMARY KEY,
  tenant_id            text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id       text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  external_id          text NOT NULL,
  name                 text,
  email                text,
  address_line1        varchar(255),
  address_line2        varchar(255),
  address_city         varchar(100),
  address_state        varchar(100),
  address_postal_code  varchar(20),
  address_country      text,
  status               text NOT NULL DEFAULT 'published',
  metadata             jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  created_by           text,
  updated_by           text
);
CREATE UNIQUE INDEX customers_external_id ON customers (tenant_id, environment_id, external_id) WHERE status <> 'deleted';

CREATE TABLE plans (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  lookup_key      text,
  description     text,
  display_order   integer NOT NULL DEFAULT 0,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE UNIQUE INDEX plans_lookup_key ON plans (tenant_id, environment_id, lookup_key) WHERE status <> 'deleted' AND lookup_key IS NOT NULL;

CREATE TABLE prices (
  id                    text PRIMARY KEY,
  tenant_id             text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id        text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type           text NOT NULL,
  entity_id             text NOT NULL,
  type                  text NOT NULL,
  billing_model         text NOT NULL,
  tier_mode             text,
  currency              text NOT NULL,
  amount                numeric NOT NULL DEFAULT 0,
  meter_id              text REFERENCES meters(id) DEFERRABLE INITIALLY DEFERRED,
  billing_period        text NOT NULL,
  billing_period_count  integer NOT NULL DEFAULT 1,
  billing_cadence       text NOT NULL DEFAULT 'RECURRING',
  invoice_cadence       text NOT NULL,
  trial_period_days     integer NOT NULL DEFAULT 0,
  tiers                 jsonb,
  transform_quantity    jsonb,
  min_quantity          numeric,
  lookup_key            text,
  description           text,
  display_name          text,
  sequence              integer NOT NULL DEFAULT 0,
  start_date            timestamptz,
  end_date              timestamptz,
  status                text NOT NULL DEFAULT 'published',
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  created_by            text,
  updated_by            text
);
CREATE INDEX prices_entity ON prices (tenant_id, environment_id, entity_type, entity_id);

CREATE TABLE subscriptions (
  id                    text PRIMARY KEY,
  tenant_id             text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id        text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id           text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  plan_id               text NOT NULL REFERENCES plans(id) DEFERRABLE INITIALLY DEFERRED,
  currency              text NOT NULL,
  subscription_status   text NOT NULL,
  billing_period        text NOT NULL,
  billing_period_count  integer NOT NULL DEFAULT 1,
  billing_cycle         text NOT NULL DEFAULT 'anniversary',
  billing_anchor        timestamptz NOT NULL,
  start_date            timestamptz NOT NULL,
  end_date              timestamptz,
  current_period_start  timestamptz NOT NULL,
  current_period_end    timestamptz NOT NULL,
  cancel_at             timestamptz,
  cancelled_at          timestamptz,
  cancel_at_period_end  boolean NOT NULL DEFAULT false,
  version               integer NOT NULL DEFAULT 1,
  status                text NOT NULL DEFAULT 'published',
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  created_by            text,
  updated_by            text
);
CREATE INDEX subscriptions_due ON subscriptions (subscription_status, current_period_end);
CREATE INDEX subscriptions_customer ON subscriptions (tenant_id, environment_id, customer_id);

CREATE TABLE subscription_line_items (
  id                 text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id     text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id    text NOT NULL REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id        text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  price_id           text NOT NULL REFERENCES prices(id) DEFERRABLE INITIALLY DEFERRED,
  meter_id           text REFERENCES meters(id) DEFERRABLE INITIALLY DEFERRED,
  currency           text NOT NULL,
  display_name       text,
  quantity           numeric NOT NULL DEFAULT 1,
  start_date         timestamptz NOT NULL,
  end_date           timestamptz,
  status             text NOT NULL DEFAULT 'published',
  metadata           jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  created_by         text,
  updated_by         text
);
CREATE INDEX subscription_line_items_sub ON subscription_line_items (subscription_id);

CREATE TABLE invoices (
  id                             text PRIMARY KEY,
  tenant_id                      text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id                 text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id                    text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  subscription_id                text REFERENCES subscriptions(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_type                   text NOT NULL,
  invoice_status                 text NOT NULL,
  payment_status                 text NOT NULL,
  currency                       text NOT NULL,
  billing_reason                 text NOT NULL,
  billing_period                 text,
  period_start                   timestamptz,
  period_end                     timestamptz,
  subtotal                       numeric NOT NULL DEFAULT 0,
  total_discount                 numeric NOT NULL DEFAULT 0,
  total_tax                      numeric NOT NULL DEFAULT 0,
  total_prepaid_credits_applied  numeric NOT NULL DEFAULT 0,
  adjustment_amount              numeric NOT NULL DEFAULT 0,
  total                          numeric NOT NULL DEFAULT 0,
  amount_due                     numeric NOT NULL DEFAULT 0,
  amount_paid                    numeric NOT NULL DEFAULT 0,
  amount_remaining               numeric NOT NULL DEFAULT 0,
  overpaid_amount                numeric NOT NULL DEFAULT 0,
  refunded_amount                numeric NOT NULL DEFAULT 0,
  invoice_number                 text,
  billing_sequence               integer,
  idempotency_key                text NOT NULL,
  description                    text,
  issue_date                     timestamptz,
  due_date                       timestamptz,
  finalized_at                   timestamptz,
  paid_at                        timestamptz,
  voided_at                      timestamptz,
  last_computed_at               timestamptz,
  version                        integer NOT NULL DEFAULT 1,
  status                         text NOT NULL DEFAULT 'published',
  metadata                       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at                     timestamptz NOT NULL DEFAULT now(),
  updated_at                     timestamptz NOT NULL DEFAULT now(),
  created_by                     text,
  updated_by                     text
);
-- Voided and deleted invoices do not block a new invoice with the same key (spec: Errors 12).
CREATE UNIQUE INDEX invoices_idempotency ON invoices (tenant_id, environment_id, idempotency_key)
  WHERE invoice_status <> 'VOIDED' AND status <> 'deleted';
CREATE INDEX invoices_customer ON invoices (tenant_id, environment_id, customer_id);
CREATE INDEX invoices_subscription ON invoices (subscription_id, period_start);

CREATE TABLE invoice_line_items (
  id                         text PRIMARY KEY,
  tenant_id                  text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id             text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  invoice_id                 text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  customer_id                text NOT NULL,
  subscription_id            text,
  subscription_line_item_id  text,
  price_id                   text,
  price_type                 text,
  meter_id                   text,
  currency                   text NOT NULL,
  display_name               text,
  amount                     numeric NOT NULL,
  quantity                   numeric NOT NULL,
  period_start               timestamptz,
  period_end                 timestamptz,
  status                     text NOT NULL DEFAULT 'published',
  metadata                   jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  created_by                 text,
  updated_by                 text
);
CREATE INDEX invoice_line_items_invoice ON invoice_line_items (invoice_id);

-- System events outbox (spec: Events): rows are written in the transaction of their cause
-- and drained to the Kafka topic system_events by a relay.
CREATE TABLE system_events_outbox (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  event_name      text NOT NULL,
  entity_type     text NOT NULL,
  entity_id       text NOT NULL,
  payload         jsonb NOT NULL DEFAULT '{}'::jsonb,
  published_at    timestamptz,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE INDEX system_events_outbox_unpublished ON system_events_outbox (created_at) WHERE published_at IS NULL;
