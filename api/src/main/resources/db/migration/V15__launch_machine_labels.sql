-- launch_instances, revised (replacing V10's whole): a launch may ask for machines carrying given labels
-- (p_machine_labels, e.g. {"topology.kubernetes.io/zone": "rack-1"}: one zone of a shape, Karpenter's offerings).
-- The filter is part of the claim itself — the SELECT … FOR UPDATE SKIP LOCKED over warm, preparing and standby
-- machines — so concurrent launches still never share a machine, and a launch that finds too few matching machines
-- raises WM503 and leaves nothing behind. An empty object matches every machine. The availability in WM503's detail
-- counts only matching machines.
--
-- V10's thirteen-argument signature stays, for API replicas not yet upgraded during a rolling upgrade (and V12's
-- twelve-argument one, which calls it): it now launches without a label filter through this one.

CREATE FUNCTION launch_instances(
    p_launch_id text, p_caller text, p_client_token text, p_request_hash bytea,
    p_shapes text[], p_allow_preparing boolean, p_min integer, p_max integer,
    p_labels jsonb, p_kubernetes jsonb, p_secrets bytea, p_has_user_data boolean, p_allow_standby boolean,
    p_machine_labels jsonb)
  RETURNS jsonb
  LANGUAGE plpgsql AS $$
DECLARE
  v_existing   record;
  v_names      text[];
  v_state      text;
  v_shape      text;
  v_row        record;
  v_machines   text[] := '{}';
  v_shapes     text[] := '{}';
  v_prev       text[] := '{}';
  v_addresses  text[] := '{}';
  v_instances  text[];
  v_commands   text[];
  v_n          integer := 0;
  v_start      bigint;
  v_from       bigint;
  v_until      bigint;
  v_pass       integer;
BEGIN
  IF p_client_token IS NOT NULL THEN
    -- The launch row first: a concurrent launch with the same token makes this insert wait until it commits (and
    -- then this one replays it) or rolls back (and then this one goes on), instead of racing it for machines.
    INSERT INTO launches (id, caller, client_token, request_hash)
    VALUES (p_launch_id, p_caller, p_client_token, p_request_hash)
    ON CONFLICT (caller, client_token) DO NOTHING;
    IF NOT FOUND THEN
      SELECT id, request_hash INTO v_existing FROM launches
      WHERE caller = p_caller AND client_token = p_client_token;
      RETURN jsonb_build_object('outcome',
          CASE WHEN v_existing.request_hash = p_request_hash THEN 'replayed' ELSE 'mismatch' END,
          'launchId', v_existing.id);
    END IF;
  END IF;

  -- Requested names or aliases → shape names, most preferred first, each once. A name wins over an alias that
  -- happens to spell it, as in GET /v1/shapes/{shape}.
  SELECT array_agg(name ORDER BY ord) INTO v_names FROM (
    SELECT name, min(ord) AS ord FROM (
      SELECT coalesce((SELECT s.name FROM shapes s WHERE s.name = r.wanted),
                      (SELECT s.name FROM shapes s WHERE s.alias = r.wanted)) AS name, r.ord
      FROM unnest(p_shapes) WITH ORDINALITY AS r(wanted, ord)) candidates
    WHERE name IS NOT NULL
    GROUP BY name) resolved;
  IF v_names IS NULL THEN
    RAISE EXCEPTION 'no such shape' USING ERRCODE = 'WM400';
  END IF;

  -- Each step starts at a random place in the shape's machines (and wraps around): claims spread out instead of all
  -- queueing on, and skipping past, the same first rows. Only machines whose labels hold every requested pair are
  -- claimed; the condition is re-checked on the locked row, so it holds for what is bound below.
  v_start := floor(random() * (coalesce(pg_sequence_last_value('machines_seq_seq'), 0) + 1));
  FOREACH v_state IN ARRAY CASE WHEN p_allow_standby THEN ARRAY['warm', 'preparing', 'standby']
                               WHEN p_allow_preparing THEN ARRAY['warm', 'preparing'] ELSE ARRAY['warm'] END LOOP
    FOREACH v_shape IN ARRAY v_names LOOP
      FOR v_pass IN 0..1 LOOP
        EXIT WHEN v_n >= p_max;
        v_from := CASE v_pass WHEN 0 THEN v_start ELSE 0 END;
        v_until := CASE v_pass WHEN 0 THEN 9223372036854775807 ELSE v_start END;
        FOR v_row IN
          SELECT id, shape, state, address FROM machines
          WHERE shape = v_shape AND state = v_state AND NOT cordoned AND instance_id IS NULL
            AND labels @> p_machine_labels
            AND seq >= v_from AND seq < v_until
          ORDER BY seq LIMIT p_max - v_n
          FOR UPDATE SKIP LOCKED
        LOOP
          v_machines := v_machines || v_row.id;
          v_shapes := v_shapes || v_row.shape;
          v_prev := v_prev || v_row.state;
          v_addresses := v_addresses || v_row.address;
          v_n := v_n + 1;
        END LOOP;
      END LOOP;
    END LOOP;
  END LOOP;

  IF v_n < p_min THEN
    -- Nothing may stay (not even the launch row): the error undoes the statement; its detail says what is there
    -- (of the machines the label filter lets in).
    RAISE EXCEPTION 'insufficient capacity' USING ERRCODE = 'WM503', DETAIL = jsonb_build_object(
      'claimable', v_n, 'shapes', to_jsonb(v_names),
      'available', (
        SELECT jsonb_object_agg(n, by_state) FROM (
          SELECT n, jsonb_build_object('warm', count(m.id) FILTER (WHERE m.state = 'warm'),
                                       'preparing', count(m.id) FILTER (WHERE m.state = 'preparing'),
                                       'standby', count(m.id) FILTER (WHERE m.state = 'standby')) AS by_state
          FROM unnest(v_names) AS n
          LEFT JOIN machines m ON m.shape = n AND NOT m.cordoned AND m.instance_id IS NULL
                                AND m.labels @> p_machine_labels
          GROUP BY n) per_shape))::text;
  END IF;

  IF p_client_token IS NULL THEN
    INSERT INTO launches (id, caller, client_token, request_hash)
    VALUES (p_launch_id, p_caller, NULL, p_request_hash);
  END IF;

  v_instances := ARRAY(SELECT 'i-' || substr(md5(gen_random_uuid()::text), 1, 17) FROM generate_series(1, v_n));
  v_commands := ARRAY(SELECT 'cmd-' || substr(md5(gen_random_uuid()::text), 1, 16) FROM generate_series(1, v_n));

  -- A machine taken from standby is prepared first: its prepare is queued before (a lower seq than) the join.
  WITH prepares AS (
    INSERT INTO commands (id, machine_id, instance_id, type, status)
    SELECT 'cmd-' || substr(md5(gen_random_uuid()::text), 1, 16), m, NULL, 'prepare', 'queued'
    FROM unnest(v_machines, v_prev) AS x(m, prev) WHERE prev = 'standby'
    RETURNING id, machine_id
  )
  INSERT INTO events (type, subject, machine_id, from_state, to_state, reason)
  SELECT 'CommandQueued', id, machine_id, NULL, 'queued', 'prepare' FROM prepares;

  WITH input AS (
    SELECT * FROM unnest(v_machines, v_instances, v_shapes, v_prev, v_commands)
      AS t(machine_id, instance_id, shape, prev_state, command_id)
  ), bound AS (
    UPDATE machines m SET instance_id = input.instance_id,
      state = CASE m.state WHEN 'warm' THEN 'joining' WHEN 'standby' THEN 'preparing' ELSE m.state END,
      state_changed_at = CASE WHEN m.state IN ('warm', 'standby') THEN now() ELSE m.state_changed_at END
    FROM input WHERE m.id = input.machine_id
  ), launched AS (
    INSERT INTO instances (id, launch_id, machine_id, shape, state, labels, kubernetes, secrets, has_user_data)
    SELECT instance_id, p_launch_id, machine_id, shape, 'pending', p_labels, p_kubernetes, p_secrets, p_has_user_data
    FROM input
  ), queued AS (
    INSERT INTO commands (id, machine_id, instance_id, type, status)
    SELECT command_id, machine_id, instance_id, 'join', 'queued' FROM input
  )
  INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
  SELECT 'InstanceState', instance_id, machine_id, instance_id, NULL, 'pending', 'launched' FROM input
  UNION ALL
  SELECT 'MachineState', machine_id, machine_id, instance_id, 'warm', 'joining', 'claimed' FROM input
  WHERE prev_state = 'warm'
  UNION ALL
  SELECT 'MachineState', machine_id, machine_id, instance_id, 'standby', 'preparing', 'claimed from standby'
  FROM input WHERE prev_state = 'standby'
  UNION ALL
  SELECT 'CommandQueued', command_id, machine_id, instance_id, NULL, 'queued', 'join' FROM input;

  RETURN jsonb_build_object('outcome', 'launched', 'launchId', p_launch_id, 'createdAt', now(),
    'instances', (
      SELECT jsonb_agg(jsonb_build_object('id', i, 'machineId', m, 'shape', s, 'address', a) ORDER BY ord)
      FROM unnest(v_instances, v_machines, v_shapes, v_addresses) WITH ORDINALITY AS x(i, m, s, a, ord)));
END
$$;

ALTER FUNCTION launch_instances(text, text, text, bytea, text[], boolean, integer, integer, jsonb, jsonb, bytea,
    boolean, boolean, jsonb) SET plan_cache_mode = force_generic_plan;

-- The earlier signature, as V12 keeps the one before it: no label filter.
DROP FUNCTION launch_instances(text, text, text, bytea, text[], boolean, integer, integer, jsonb, jsonb, bytea,
    boolean, boolean);
CREATE FUNCTION launch_instances(
    p_launch_id text, p_caller text, p_client_token text, p_request_hash bytea,
    p_shapes text[], p_allow_preparing boolean, p_min integer, p_max integer,
    p_labels jsonb, p_kubernetes jsonb, p_secrets bytea, p_has_user_data boolean, p_allow_standby boolean)
  RETURNS jsonb LANGUAGE sql AS $$
  SELECT launch_instances(p_launch_id, p_caller, p_client_token, p_request_hash, p_shapes, p_allow_preparing, p_min,
                          p_max, p_labels, p_kubernetes, p_secrets, p_has_user_data, p_allow_standby, '{}'::jsonb)
$$;
