-- Webhook signing secrets at rest: AES-256-GCM (secret-at-rest.ts) in secret_encrypted. The
-- plaintext column stays only for rows written before this; scripts/rotate-secrets.ts (run by
-- scripts/migrate.ts) seals them and clears it.
ALTER TABLE webhook_endpoints ADD COLUMN secret_encrypted text;
ALTER TABLE webhook_endpoints ALTER COLUMN secret DROP NOT NULL;
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_secret_present CHECK (secret IS NOT NULL OR secret_encrypted IS NOT NULL);
