-- Groups collect prices or features. Members are listed in entity_ids; a feature's group is
-- also kept on features.group_id (the service writes both in one transaction).
CREATE TABLE groups (
  id              text PRIMARY KEY,
  tenant_id       text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id  text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  name            text NOT NULL,
  lookup_key      text,
  entity_type     text NOT NULL CHECK (entity_type IN ('price', 'feature')),
  entity_ids      jsonb NOT NULL DEFAULT '[]'::jsonb,
  status          text NOT NULL DEFAULT 'published',
  metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text
);
CREATE UNIQUE INDEX groups_lookup_key ON groups (tenant_id, environment_id, lookup_key) WHERE status <> 'deleted' AND lookup_key IS NOT NULL;
CREATE INDEX groups_scope ON groups (tenant_id, environment_id, entity_type);

-- The features table predates this one, so its reference to groups is declared here.
ALTER TABLE features ADD CONSTRAINT features_group_id_fkey
  FOREIGN KEY (group_id) REFERENCES groups(id) DEFERRABLE INITIALLY DEFERRED;
