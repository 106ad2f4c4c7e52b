-- Environment clone: which target record each source record became. A record is copied in the
-- same transaction that claims its row here, so a retried or repeated clone copies nothing twice.
CREATE TABLE environment_clone_map (
  tenant_id              text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  source_environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  target_environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  entity_type            text NOT NULL,
  source_id              text NOT NULL,
  target_id              text NOT NULL,
  -- false: the target already had a record with the same lookup key, and it was kept
  created                boolean NOT NULL,
  created_at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, source_environment_id, target_environment_id, entity_type, source_id)
);
