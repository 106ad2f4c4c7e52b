-- A tenant's own request rate limits (billing API and ingest, requests per
-- RATE_LIMIT_WINDOW_SECONDS): NULL = the configured default, 0 = no limit. Set by the
-- operator (scripts/set-rate-limits.ts), never through the tenant's own API.
ALTER TABLE tenants ADD COLUMN rate_limit_per_key integer CHECK (rate_limit_per_key >= 0);
ALTER TABLE tenants ADD COLUMN rate_limit_per_tenant integer CHECK (rate_limit_per_tenant >= 0);
