-- Pre-joined standby (issue 24): machines joined to a cluster ahead of time, waiting to be handed to a launch without a
-- join. A standby launch (instances.standby) claims and joins machines like any launch, but its machines go
-- joining → pre-joined rather than in-use. A launch with allowPreJoined takes, before warm machines, pre-joined ones
-- whose standby instance is in its project and joined to the same cluster: in the launch transaction the standby
-- instance ends (running → terminated), a new instance starts running at once (instances.pre_joined) and the machine
-- goes pre-joined → in-use (R__launch_instances).

-- 1. What an instance is: a standby one (holding a pre-joined machine), or one handed a pre-joined machine. Both
--    false for everything before.
ALTER TABLE instances ADD COLUMN standby boolean NOT NULL DEFAULT false;
ALTER TABLE instances ADD COLUMN pre_joined boolean NOT NULL DEFAULT false;

-- 2. The cluster a standby instance joined, as its join named it (kubernetes.apiServer and caCertHash), in columns of
--    their own so the claim's scan compares plain text. Written for standby instances only.
ALTER TABLE instances ADD COLUMN api_server text;
ALTER TABLE instances ADD COLUMN ca_cert_hash text;
ALTER TABLE instances ADD CONSTRAINT instances_standby_cluster
  CHECK (NOT standby OR (api_server IS NOT NULL AND ca_cert_hash IS NOT NULL));
ALTER TABLE instances ADD CONSTRAINT instances_standby_or_pre_joined CHECK (NOT (standby AND pre_joined));

-- 3. A pre-joined machine always holds its standby instance.
ALTER TABLE machines ADD CONSTRAINT machines_pre_joined_held
  CHECK (state <> 'pre-joined' OR instance_id IS NOT NULL);

-- 4. The claim's scan of pre-joined machines, by shape in seq order. (The claimable index leaves them out: they hold
--    an instance.) Few rows: only the machines in standby for some cluster.
CREATE INDEX machines_pre_joined ON machines (shape, seq) WHERE state = 'pre-joined' AND NOT cordoned;
