-- SSH access to servers: private keys sealed at rest, how each machine is reached, and enrollments over SSH.

-- Private keys operators upload once and name in requests. The key is AES-GCM sealed (bound to its id); only the
-- public half and its fingerprint are ever shown.
CREATE TABLE ssh_keys (
  id           text PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  public_key   text NOT NULL,
  fingerprint  text NOT NULL,
  private_key  bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- How a machine's operating system is reached over SSH (for recovery and SSH power-off): written when a machine
-- enrolls through an SSH enrollment. The host key is pinned by its SHA-256 fingerprint.
CREATE TABLE machine_ssh (
  machine_id            text PRIMARY KEY REFERENCES machines(id),
  host                  text    NOT NULL,
  port                  integer NOT NULL,
  username              text    NOT NULL,
  key_id                text    NOT NULL REFERENCES ssh_keys(id),
  host_key_fingerprint  text    NOT NULL,
  updated_at            timestamptz NOT NULL DEFAULT now()
);

-- An agent installed over SSH. Its single-use enrollment token ties the machine that enrolls with it back to this
-- row, and so to the SSH access that installed it.
CREATE TABLE ssh_enrollments (
  id                    text PRIMARY KEY,
  token_id              text    NOT NULL UNIQUE REFERENCES enrollment_tokens(id),
  host                  text    NOT NULL,
  port                  integer NOT NULL,
  username              text    NOT NULL,
  key_id                text    NOT NULL REFERENCES ssh_keys(id),
  host_key_fingerprint  text    NOT NULL,
  state                 text    NOT NULL CHECK (state IN ('installing', 'installed', 'enrolled', 'failed')),
  message               text,
  machine_id            text REFERENCES machines(id),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
