-- Disabled endpoints (disabled_at) and cancelled deliveries: deleting or disabling an endpoint
-- cancels its deliveries still PENDING (cancel_reason endpoint_deleted / endpoint_disabled).
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at timestamptz;
ALTER TABLE webhook_deliveries ADD COLUMN cancel_reason text;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_status CHECK (delivery_status IN ('PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED'));
