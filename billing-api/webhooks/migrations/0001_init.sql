-- Outbound webhooks: endpoints per environment, one delivery per (endpoint, system event),
-- and every attempt recorded.
CREATE TABLE webhook_endpoints (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  url             text NOT NULL,
  event_types     jsonb NOT NULL DEFAULT '[]'::jsonb,
  secret          text NOT NULL,
  description     text,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (tenant_id, environment_id) WHERE status = 'published';

CREATE TABLE webhook_deliveries (
  id               text PRIMARY KEY,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints(id) DEFERRABLE INITIALLY DEFERRED,
  event_id         text NOT NULL,
  event_name       text NOT NULL,
  payload          jsonb NOT NULL,
  delivery_status  text NOT NULL DEFAULT 'PENDING',
  attempts         integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  status           text NOT NULL DEFAULT 'published',
  metadata         jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  created_by       text,
  updated_by       text,
  CONSTRAINT webhook_deliveries_status CHECK (delivery_status IN ('PENDING', 'SUCCEEDED', 'FAILED'))
);
CREATE UNIQUE INDEX webhook_deliveries_once ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX webhook_deliveries_scope ON webhook_deliveries (tenant_id, environment_id, delivery_status, created_at);

CREATE TABLE webhook_attempts (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL,
  environment_id  text NOT NULL,
  delivery_id     text NOT NULL REFERENCES webhook_deliveries(id) DEFERRABLE INITIALLY DEFERRED,
  attempt         integer NOT NULL,
  status_code     integer,
  latency_ms      integer NOT NULL,
  error           text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempt);
