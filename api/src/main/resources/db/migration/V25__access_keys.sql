-- Access keys (issue 28): an API token may also sign requests to the EC2-compatible endpoint with AWS Signature
-- Version 4, which needs a shared secret the server can read back (an HMAC key), not a digest. Each token but a boot
-- token gets one pair when it is minted: the id in clear (what a signature names), the secret sealed with the API's
-- SecretBox, bound to the id (auth/AccessKeys). A token revoked revokes its key with it: the lookup reads revoked_at.
-- Tokens from before, and the bootstrap admin token, have none.
ALTER TABLE api_tokens ADD COLUMN access_key_id text UNIQUE;
ALTER TABLE api_tokens ADD COLUMN access_key_secret bytea;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_access_key_whole
  CHECK ((access_key_id IS NULL) = (access_key_secret IS NULL));
-- A boot token travels in clear (DHCP, plain HTTP): it must never be able to sign.
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_boot_no_access_key
  CHECK (role <> 'boot' OR access_key_id IS NULL);
