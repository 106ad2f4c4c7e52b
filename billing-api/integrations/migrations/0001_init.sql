-- Provider connections (credentials encrypted with AES-256-GCM, see crypto.ts), the mapping
-- of local entities to provider records, inbound webhook events already processed, and the
-- customer-to-member mappings that enable automatic charging.
CREATE TABLE integration_connections (
  id                     text PRIMARY KEY,
  tenant_id              text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id         text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  provider               text NOT NULL,
  name                   text NOT NULL,
  credentials_encrypted  text NOT NULL,
  credentials_hint       jsonb NOT NULL DEFAULT '{}'::jsonb,
  settings               jsonb NOT NULL DEFAULT '{}'::jsonb,
  status                 text NOT NULL DEFAULT 'published',
  metadata               jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  created_by             text,
  updated_by             text
);
-- One active connection per provider and environment: the inbound webhook URL names only the provider.
CREATE UNIQUE INDEX integration_connections_active ON integration_connections (tenant_id, environment_id, provider)
  WHERE status = 'published';

CREATE TABLE entity_integration_mappings (
  id                  text PRIMARY KEY,
  tenant_id           text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id      text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type         text NOT NULL,
  entity_id           text NOT NULL,
  provider_type       text NOT NULL,
  provider_entity_id  text NOT NULL,
  status              text NOT NULL DEFAULT 'published',
  metadata            jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  created_by          text,
  updated_by          text
);
CREATE UNIQUE INDEX entity_integration_mappings_entity ON entity_integration_mappings (tenant_id, environment_id, entity_type, entity_id, provider_type)
  WHERE status <> 'deleted';
CREATE UNIQUE INDEX entity_integration_mappings_provider ON entity_integration_mappings (tenant_id, environment_id, entity_type, provider_type, provider_entity_id)
  WHERE status <> 'deleted';

-- Inbound provider events, recorded in the transaction that applies them: a redelivery finds its row.
CREATE TABLE integration_webhook_events (
  id                 text PRIMARY KEY,
  tenant_id          text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id     text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  provider           text NOT NULL,
  provider_event_id  text NOT NULL,
  event_type         text NOT NULL,
  outcome            text NOT NULL,
  processed_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX integration_webhook_events_once ON integration_webhook_events (tenant_id, environment_id, provider, provider_event_id);

-- payment.succeeded: the provider customer and payment method to charge this customer with later.
CREATE TABLE integration_payment_members (
  id                    text PRIMARY KEY,
  tenant_id             text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id        text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  customer_id           text NOT NULL REFERENCES customers(id) DEFERRABLE INITIALLY DEFERRED,
  provider              text NOT NULL,
  provider_customer_id  text NOT NULL,
  payment_method_id     text,
  last_payment_id       text,
  status                text NOT NULL DEFAULT 'published',
  metadata              jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  created_by            text,
  updated_by            text
);
CREATE UNIQUE INDEX integration_payment_members_customer ON integration_payment_members (tenant_id, environment_id, customer_id, provider);
