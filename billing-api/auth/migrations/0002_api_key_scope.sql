-- A key's scope: `full` (everything its user's roles allow) or `read_only` (reads of its
-- environment; every write route answers 403, billing-api/http/route-access.ts).
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'full' CHECK (scope IN ('full', 'read_only'));
