-- A role for network boot: a token that may fetch iPXE scripts (each minting a single-use enrollment token) and
-- nothing else, so the credential sitting in DHCP/iPXE configuration opens no other door.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_role_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_role_check CHECK (role IN ('admin', 'client', 'read-only', 'boot'));
