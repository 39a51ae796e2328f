-- A handshake's secret arrives unsigned, so anyone can post one: it stays pending (never tried against a
-- signature) until an operator takes it through the admin API, which marks it trusted and drops the
-- other pending ones. Secrets kept before this migration are pending too: the operator takes one again.
ALTER TABLE source_webhook_handshakes ADD COLUMN trusted_at timestamptz;
CREATE INDEX source_webhook_handshakes_trusted_idx
  ON source_webhook_handshakes (source_type, trusted_at DESC) WHERE trusted_at IS NOT NULL;
