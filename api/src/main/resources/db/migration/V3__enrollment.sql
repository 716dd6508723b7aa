-- Enrollment: tokens an agent presents once to get a client certificate, and the certificate each machine holds now.

CREATE TABLE enrollment_tokens (
  id          text PRIMARY KEY,
  token_hash  bytea NOT NULL UNIQUE,
  uses_left   integer NOT NULL CHECK (uses_left >= 0),
  uses        integer NOT NULL,
  labels      jsonb NOT NULL DEFAULT '{}',
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

-- The serial of the machine's current client certificate: the channel accepts that one only, so re-enrolling (or
-- retiring) a machine shuts out any older certificate.
ALTER TABLE machines ADD COLUMN cert_serial text;
