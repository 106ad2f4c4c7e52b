-- Generated invoice documents (the PDF), cached per invoice version. Every invoice change
-- increments invoices.version, so a row whose invoice_version differs from the invoice's is
-- stale and is replaced on the next download; force_generate replaces it regardless.
CREATE TABLE invoice_documents (
  invoice_id       text NOT NULL REFERENCES invoices(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  tenant_id        text NOT NULL REFERENCES tenants(id) DEFERRABLE INITIALLY DEFERRED,
  environment_id   text NOT NULL REFERENCES environments(id) DEFERRABLE INITIALLY DEFERRED,
  kind             text NOT NULL CHECK (kind IN ('pdf')),
  invoice_version  integer NOT NULL,
  content          bytea NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (invoice_id, kind)
);
