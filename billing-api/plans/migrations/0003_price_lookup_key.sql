CREATE UNIQUE INDEX prices_lookup_key ON prices (tenant_id, environment_id, lookup_key)
  WHERE status <> 'deleted' AND lookup_key IS NOT NULL;
