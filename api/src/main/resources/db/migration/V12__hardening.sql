-- 1. Enrollment tokens minted per network boot may take back only a machine nobody is using: not one whose agent
--    is connected and busy, which a holder of the boot credential could otherwise take over (its commands and its
--    joins' secrets) by presenting its hardware identity.
ALTER TABLE enrollment_tokens ADD COLUMN reenroll_idle_only boolean NOT NULL DEFAULT false;

-- 2. A key used by an old enrollment can still be deleted (rotated out); only machines' SSH access holds it.
ALTER TABLE ssh_enrollments ALTER COLUMN key_id DROP NOT NULL;
ALTER TABLE ssh_enrollments DROP CONSTRAINT ssh_enrollments_key_id_fkey;
ALTER TABLE ssh_enrollments ADD CONSTRAINT ssh_enrollments_key_id_fkey
  FOREIGN KEY (key_id) REFERENCES ssh_keys(id) ON DELETE SET NULL;

-- 3. The launch function's earlier signature, for API replicas not yet upgraded during a rolling upgrade (V10
--    replaced it with one that also takes p_allow_standby).
CREATE FUNCTION launch_instances(
    p_launch_id text, p_caller text, p_client_token text, p_request_hash bytea,
    p_shapes text[], p_allow_preparing boolean, p_min integer, p_max integer,
    p_labels jsonb, p_kubernetes jsonb, p_secrets bytea, p_has_user_data boolean)
  RETURNS jsonb LANGUAGE sql AS $$
  SELECT launch_instances(p_launch_id, p_caller, p_client_token, p_request_hash, p_shapes, p_allow_preparing, p_min,
                          p_max, p_labels, p_kubernetes, p_secrets, p_has_user_data, false)
$$;
