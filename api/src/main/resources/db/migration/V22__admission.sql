-- New hardware is admitted, not assumed. A network boot's credential (a boot token) sits in DHCP configuration and
-- travels in clear; the hardware identity an agent reports is merely reported. So a machine first seen through a
-- boot token waits as new hardware (state 'new') until an operator accepts it, unless the operator registered its
-- MAC or system UUID beforehand (a hardware record). Machines enrolled with an operator's own token (an admin-minted
-- enrollment token, an SSH enrollment) or registered by hand are admitted as before.

-- 1. Admitted or not. Everything from before is. An unadmitted machine can never be prepared, warm, claimed or in
--    standby: only enrolling, new, offline (out of contact while waiting) or retired (rejected).
ALTER TABLE machines ADD COLUMN admitted boolean NOT NULL DEFAULT true;
ALTER TABLE machines ADD CONSTRAINT machines_unadmitted_wait
  CHECK (admitted OR state IN ('enrolling', 'new', 'offline', 'retired'));

-- 2. The labels a boot token's machines may carry, bound when the token is minted (only boot tokens have them):
--    an iPXE URL may narrow them, never add to them.
ALTER TABLE api_tokens ADD COLUMN machine_labels jsonb;

-- 3. Enrollment tokens a network boot minted: by which boot token, for which hardware (what iPXE said). A boot
--    token's tokens need acceptance of what they enroll; at most one is outstanding per MAC and per system UUID.
ALTER TABLE enrollment_tokens ADD COLUMN boot_token_id text;
ALTER TABLE enrollment_tokens ADD COLUMN boot_mac text;
ALTER TABLE enrollment_tokens ADD COLUMN boot_uuid text;
CREATE INDEX enrollment_tokens_boot_mac ON enrollment_tokens (boot_mac)
  WHERE boot_mac IS NOT NULL AND revoked_at IS NULL AND uses_left > 0;
CREATE INDEX enrollment_tokens_boot_uuid ON enrollment_tokens (boot_uuid)
  WHERE boot_uuid IS NOT NULL AND revoked_at IS NULL AND uses_left > 0;
CREATE INDEX enrollment_tokens_boot_token ON enrollment_tokens (boot_token_id)
  WHERE boot_token_id IS NOT NULL AND revoked_at IS NULL;

-- 4. Hardware the operator expects (as MAAS commissions and Tinkerbell matches hardware records): a server whose
--    identity matches a record is admitted when it enrolls through a network boot, and gets the record's labels.
--    The record is named by the identity it was registered under (a MAC or a system UUID); it may require the other
--    one too. machine_id: the machine that enrolled as it (no foreign key: a record may outlive nothing, and be
--    registered before its machine exists).
CREATE TABLE hardware (
  seq          bigserial UNIQUE,
  id           text PRIMARY KEY,
  primary_mac  text UNIQUE,
  system_uuid  text UNIQUE,
  labels       jsonb NOT NULL DEFAULT '{}',
  machine_id   text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  CHECK (primary_mac IS NOT NULL OR system_uuid IS NOT NULL),
  CHECK (id = primary_mac OR id = system_uuid)
);

-- 5. How fast each boot token mints enrollment tokens: a leaky bucket per token (its level drains at the configured
--    rate; each mint adds one; a mint that would take it over the burst is refused). Shared by every replica.
CREATE TABLE boot_mint_buckets (
  token_id  text PRIMARY KEY,
  level     double precision NOT NULL,
  at        timestamptz NOT NULL
);

-- One mint for a token: whether it fits, and the level it found (drained to now). The row lock serializes a token's
-- mints across replicas (its first ones too: the row is created before it is locked).
CREATE FUNCTION boot_mint(p_token text, p_per_second double precision, p_burst double precision)
  RETURNS TABLE (ok boolean, drained double precision) LANGUAGE plpgsql AS $$
DECLARE
  v_level double precision;
  v_at timestamptz;
BEGIN
  INSERT INTO boot_mint_buckets AS b (token_id, level, at) VALUES (p_token, 0, clock_timestamp())
  ON CONFLICT (token_id) DO NOTHING;
  SELECT b.level, b.at INTO v_level, v_at FROM boot_mint_buckets b WHERE b.token_id = p_token FOR UPDATE;
  drained := greatest(0, v_level - extract(epoch FROM clock_timestamp() - v_at)::double precision * p_per_second);
  ok := drained + 1 <= p_burst;
  UPDATE boot_mint_buckets b SET level = drained + CASE WHEN ok THEN 1 ELSE 0 END, at = clock_timestamp()
  WHERE b.token_id = p_token;
  RETURN NEXT;
END
$$;
