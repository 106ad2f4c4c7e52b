-- API keys are stored as keyed hashes (HMAC-SHA256 under API_KEY_HASH_SECRET); the scheme names
-- how a row's hash was made. Existing rows hold the bare SHA-256 digest: `sha256`, upgraded by
-- scripts/rotate-secrets.ts (run by scripts/migrate.ts) or on the key's next use.
ALTER TABLE api_keys ADD COLUMN key_hash_scheme text NOT NULL DEFAULT 'sha256';
