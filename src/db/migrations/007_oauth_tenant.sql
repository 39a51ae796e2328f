-- OAuth consent per account: sources whose accounts each run their own authorization server (Zendesk:
-- `https://{subdomain}.zendesk.com`) remember which account a consent was for, from initiate to callback
-- and on the stored token, so a connection only takes a token of its own account.
ALTER TABLE oauth_states ADD COLUMN tenant text;
ALTER TABLE oauth_secrets ADD COLUMN tenant text;
