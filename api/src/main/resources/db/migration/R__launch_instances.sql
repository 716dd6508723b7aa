-- The RunInstances transaction: the one source of launch_instances_batch and of the launch_instances signatures kept
-- for older API replicas. Flyway re-applies this file after the versioned migrations whenever it changes, so the
-- next revision is a diff of this file (V2, V6, V10 and V15 hold the history). Should a revision change a return
-- type or drop a parameter, DROP the old function at the top of this file: CREATE OR REPLACE cannot. Likewise a
-- constraint the previous revision relied on is dropped at its end (V21's old key).
--
-- One call launches a batch of requests (the API gathers the launches that arrive while earlier ones are in the
-- database) in one transaction: each request is claimed on its own, then every claimed machine is bound, and its
-- instance, join command and events written, by one statement for the whole batch. A request that cannot be met
-- leaves nothing behind and does not affect the others; its outcome says why.
--
-- Request i is the i-th element of every p_* array (a JSON null in p_kubernetes stands for none: the PostgreSQL
-- client cannot put an SQL NULL in a jsonb array). Ids are minted by the caller (the API's Ids, the one place that
-- mints them): p_instance_ids, p_join_ids and p_prepare_ids hold, for each request in order, as many ids as its max.
--
-- Per request, in order:
-- Every request belongs to a project (p_projects): its launch row and instances carry it, and its client token is
-- unique within it, whichever of the project's API tokens (p_callers) sends it: a rotated credential retrying a
-- launch gets the same launch (V21; a launch from before V21 whose token another caller of its project had used
-- first is token_per_caller, and its own caller's retry still finds it).
--
-- 1. With a client token the launch row is written first: a concurrent launch with the same token in the project
--    waits on that insert until this one commits (then replays it) or rolls back (then goes on) instead of racing it
--    for machines. Callers sort a batch by (project, client token), the key, so two batches never wait on each
--    other's rows in opposite orders.
-- 2. Requested names or aliases → shape names, most preferred first, each once (a name wins over an alias that
--    happens to spell it, as in GET /v1/shapes/{shape}). A shape the project's quota closes (maxInstances 0) is
--    passed over: for the project it does not exist (GET /v1/shapes does not show it either). None left: outcome
--    'no-such-shape', with 'closed' naming the shapes passed over for their quota, if any (an operator is told).
-- 3. With p_allow_pre_joined, pre-joined machines are claimed first, each shape in order (V24): those whose standby
--    instance is in the request's project and joined the same cluster (its api_server and ca_cert_hash equal the
--    join's apiServer and caCertHash), not cordoned, carrying the machine labels. Such a machine is handed over
--    without a join: its standby instance ends (running → terminated, naming the new instance; no reset), the new
--    instance is running at once (pre_joined, no secrets kept) and the machine goes pre-joined → in-use. The swap
--    leaves the project's live instances as they were, so it takes no room of a quota.
--    Then machines are claimed warm, then preparing (p_allow_preparing), then standby (p_allow_standby), each shape
--    in order, only those whose labels hold every pair of p_machine_labels and — when the join names the control
--    plane's version (p_kubernetes' controlPlaneVersion) — whose kubelet it accepts (V23's kubelet_version: never
--    newer, at most 2 minor versions older, 3 from 1.28; a machine that does not say is not passed over: its join
--    checks again), with FOR UPDATE SKIP LOCKED, so
--    concurrent launches neither share a machine nor wait for each other. Each step starts at a random place in the
--    machines (and wraps around): claims spread out instead of all queueing on, and skipping past, the same first
--    rows. Machines an earlier request of this batch took are skipped (this transaction holds their locks). The
--    label test is spelled so that the cached generic plan walks the claimable index in seq order and stops at the
--    limit: a bare "labels @> $1" lets the planner (which guesses containment matches 0.1 % of rows) AND in the
--    labels' GIN index, which for an empty filter matches every machine, then sort them all — per claim.
-- 4. A project's quota for a shape (view project_quota_use: the most live instances, and how many are) caps what
--    is claimed of that shape, counting its live instances and what this batch claimed for the project. The batch first takes, in name order, an advisory
--    lock per project with a quota, so two batches never both count the same room (and never deadlock on it);
--    launches of projects without quotas take no lock.
-- 5. Fewer than p_min: outcome 'insufficient' with what is there (of the machines the label filter lets in), or
--    'quota-exceeded' when a quota kept out machines that were there; the launch row is removed again and the
--    machines it locked are free again at commit.
-- A machine taken from standby is prepared first: its prepare is queued before (a lower seq than) its join.
-- A standby request (p_standby) is claimed and joined like any other; its instances are standby, with their cluster
-- (api_server, ca_cert_hash) kept for the claims above, and the join's result makes their machines pre-joined.

CREATE OR REPLACE FUNCTION launch_instances_batch(
    p_launch_ids text[], p_callers text[], p_client_tokens text[], p_request_hashes bytea[],
    p_shapes jsonb[], p_allow_preparing boolean[], p_mins integer[], p_maxes integer[],
    p_labels jsonb[], p_kubernetes jsonb[], p_secrets bytea[], p_has_user_data boolean[], p_allow_standby boolean[],
    p_machine_labels jsonb[], p_instance_ids text[], p_join_ids text[], p_prepare_ids text[], p_projects text[],
    p_standby boolean[], p_allow_pre_joined boolean[])
  RETURNS jsonb[]
  LANGUAGE plpgsql AS $$
DECLARE
  v_outcomes   jsonb[] := '{}';
  v_existing   record;
  v_names      text[];
  v_closed     text[];
  v_state      text;
  v_shape      text;
  v_row        record;
  v_claim      refcursor;
  v_n          integer;
  v_first      integer;
  v_id_base    integer := 0;
  v_start      bigint;
  v_from       bigint;
  v_until      bigint;
  v_pass       integer;
  -- What this batch claimed, one element per machine.
  v_machines   text[] := '{}';
  v_requests   integer[] := '{}';
  v_slots      integer[] := '{}';  -- where the machine's ids are in p_instance_ids, p_join_ids, p_prepare_ids
  v_shapes     text[] := '{}';
  v_prev       text[] := '{}';
  v_addresses  text[] := '{}';
  v_handed     text[] := '{}';  -- the standby instance a pre-joined machine is taken from; NULL for the others
  v_server     text;            -- the cluster the request joins (its apiServer and caCertHash)
  v_hash       text;
  v_cap        bigint;
  v_capped     boolean;
  v_plane      text[];
  v_newest     integer;  -- the kubelet versions the request's control plane accepts, as V23's kubelet_version
  v_oldest     integer;
  v_passed     text[];   -- a refused request's free machines whose kubelet its control plane does not accept
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('warmmetal-quota'), hashtext(holder.name))
  FROM (SELECT DISTINCT u.name FROM unnest(p_projects) AS u(name)
        WHERE EXISTS (SELECT 1 FROM project_quotas q WHERE q.project = u.name)
        ORDER BY u.name) holder;
  v_start := floor(random() * (coalesce(pg_sequence_last_value('machines_seq_seq'), 0) + 1));
  FOR i IN 1 .. coalesce(array_length(p_launch_ids, 1), 0) LOOP
    v_id_base := v_id_base + coalesce(p_maxes[i - 1], 0);
    IF p_client_tokens[i] IS NOT NULL THEN
      INSERT INTO launches (id, caller, client_token, request_hash, project)
      VALUES (p_launch_ids[i], p_callers[i], p_client_tokens[i], p_request_hashes[i], p_projects[i])
      ON CONFLICT (project, client_token) WHERE NOT token_per_caller DO NOTHING;
      IF NOT FOUND THEN
        SELECT id, request_hash INTO v_existing FROM launches
        WHERE project = p_projects[i] AND caller = p_callers[i] AND client_token = p_client_tokens[i]
          AND token_per_caller;
        IF NOT FOUND THEN
          SELECT id, request_hash INTO v_existing FROM launches
          WHERE project = p_projects[i] AND client_token = p_client_tokens[i] AND NOT token_per_caller;
        END IF;
        v_outcomes := v_outcomes || jsonb_build_object('outcome',
            CASE WHEN v_existing.request_hash = p_request_hashes[i] THEN 'replayed' ELSE 'mismatch' END,
            'launchId', v_existing.id);
        CONTINUE;
      END IF;
    END IF;

    SELECT array_agg(name ORDER BY ord) FILTER (WHERE NOT closed), array_agg(name ORDER BY ord) FILTER (WHERE closed)
      INTO v_names, v_closed FROM (
      SELECT candidates.name, min(ord) AS ord,
             EXISTS (SELECT 1 FROM project_quotas q
                     WHERE q.project = p_projects[i] AND q.shape = candidates.name AND q.max_instances = 0) AS closed
      FROM (
        SELECT coalesce((SELECT s.name FROM shapes s WHERE s.name = r.wanted),
                        (SELECT s.name FROM shapes s WHERE s.alias = r.wanted)) AS name, r.ord
        FROM jsonb_array_elements_text(p_shapes[i]) WITH ORDINALITY AS r(wanted, ord)) candidates
      WHERE candidates.name IS NOT NULL
      GROUP BY candidates.name) resolved;
    IF v_names IS NULL THEN
      DELETE FROM launches WHERE id = p_launch_ids[i];
      v_outcomes := v_outcomes || CASE WHEN v_closed IS NULL THEN jsonb_build_object('outcome', 'no-such-shape')
        ELSE jsonb_build_object('outcome', 'no-such-shape', 'closed', to_jsonb(v_closed), 'project', p_projects[i],
          'quotas', (
            SELECT jsonb_object_agg(q.shape, jsonb_build_object('maxInstances', q.max_instances, 'inUse', q.in_use))
            FROM project_quota_use q WHERE q.project = p_projects[i] AND q.shape = ANY (v_closed))) END;
      CONTINUE;
    END IF;

    v_plane := regexp_match(p_kubernetes[i] ->> 'controlPlaneVersion', '^v?([0-9]{1,3})\.([0-9]{1,3})(\.|$|-|\+)');
    v_newest := v_plane[1]::integer * 1000 + v_plane[2]::integer;
    v_oldest := v_newest - CASE WHEN v_plane[2]::integer >= 28 THEN 3 ELSE 2 END;

    v_first := coalesce(array_length(v_machines, 1), 0) + 1;
    v_n := 0;
    v_capped := false;
    v_server := p_kubernetes[i] ->> 'apiServer';
    v_hash := p_kubernetes[i] ->> 'caCertHash';
    FOREACH v_state IN ARRAY CASE WHEN p_allow_pre_joined[i] THEN ARRAY['pre-joined'] ELSE '{}' END
        || CASE WHEN p_allow_standby[i] THEN ARRAY['warm', 'preparing', 'standby']
                WHEN p_allow_preparing[i] THEN ARRAY['warm', 'preparing'] ELSE ARRAY['warm'] END LOOP
      FOREACH v_shape IN ARRAY v_names LOOP
        -- Taking a pre-joined machine ends the project's standby instance on it: it takes no room of a quota.
        v_cap := NULL;
        IF v_state <> 'pre-joined' THEN
          SELECT q.max_instances - q.in_use
                 - (SELECT count(*) FROM unnest(v_requests, v_shapes, v_handed) AS b(request, shape, handed)
                      WHERE b.shape = v_shape AND p_projects[b.request] = p_projects[i] AND b.handed IS NULL)
            INTO v_cap FROM project_quota_use q WHERE q.project = p_projects[i] AND q.shape = v_shape;
        END IF;
        IF v_cap IS NOT NULL AND v_cap < p_maxes[i] - v_n THEN
          v_capped := true;
        END IF;
        FOR v_pass IN 0..1 LOOP
          EXIT WHEN v_n >= p_maxes[i] OR v_cap <= 0;
          v_from := CASE v_pass WHEN 0 THEN v_start ELSE 0 END;
          v_until := CASE v_pass WHEN 0 THEN 9223372036854775807 ELSE v_start END;
          -- Two scans, one claim: a cursor opened on either (each a static statement, planned once).
          IF v_state = 'pre-joined' THEN
            OPEN v_claim FOR
              SELECT m.id, m.shape, m.state, m.address, m.instance_id AS handed_from
              FROM machines m JOIN instances s ON s.id = m.instance_id
              WHERE m.shape = v_shape AND m.state = 'pre-joined' AND NOT m.cordoned
                AND s.standby AND s.state = 'running' AND s.project = p_projects[i]
                AND s.api_server = v_server AND s.ca_cert_hash = v_hash
                AND (p_machine_labels[i] = '{}' OR m.labels @> p_machine_labels[i])
                AND m.seq >= v_from AND m.seq < v_until
                AND m.id <> ALL (v_machines)
              ORDER BY m.seq LIMIT p_maxes[i] - v_n
              FOR UPDATE OF m SKIP LOCKED;
          ELSE
            OPEN v_claim FOR
              SELECT id, shape, state, address, NULL::text AS handed_from FROM machines
              WHERE shape = v_shape AND state = v_state AND NOT cordoned AND instance_id IS NULL
                AND (p_machine_labels[i] = '{}' OR labels @> p_machine_labels[i])
                AND (v_newest IS NULL OR kubelet_version IS NULL OR kubelet_version BETWEEN v_oldest AND v_newest)
                AND seq >= v_from AND seq < v_until
                AND id <> ALL (v_machines)
              ORDER BY seq LIMIT least(p_maxes[i] - v_n, v_cap)
              FOR UPDATE SKIP LOCKED;
          END IF;
          LOOP
            FETCH v_claim INTO v_row;
            EXIT WHEN NOT FOUND;
            v_n := v_n + 1;
            v_cap := v_cap - 1;
            v_machines := v_machines || v_row.id;
            v_requests := v_requests || i;
            v_slots := v_slots || (v_id_base + v_n);
            v_shapes := v_shapes || v_row.shape;
            v_prev := v_prev || v_row.state;
            v_addresses := v_addresses || v_row.address;
            v_handed := v_handed || v_row.handed_from;
          END LOOP;
          CLOSE v_claim;
        END LOOP;
      END LOOP;
    END LOOP;

    IF v_n < p_mins[i] THEN
      v_machines := v_machines[1 : v_first - 1];
      v_requests := v_requests[1 : v_first - 1];
      v_slots := v_slots[1 : v_first - 1];
      v_shapes := v_shapes[1 : v_first - 1];
      v_prev := v_prev[1 : v_first - 1];
      v_addresses := v_addresses[1 : v_first - 1];
      v_handed := v_handed[1 : v_first - 1];
      DELETE FROM launches WHERE id = p_launch_ids[i];
      -- The free machines passed over for their kubelet: counted in the answer, and each says so on its own
      -- timeline (at most one a minute), so an operator looking at a warm machine launches never take sees why.
      v_passed := '{}';
      IF v_newest IS NOT NULL THEN
        v_passed := ARRAY(
          SELECT m.id FROM machines m
          WHERE m.shape = ANY (v_names) AND m.state IN ('warm', 'preparing', 'standby') AND NOT m.cordoned
            AND m.instance_id IS NULL AND (p_machine_labels[i] = '{}' OR m.labels @> p_machine_labels[i])
            AND m.kubelet_version NOT BETWEEN v_oldest AND v_newest);
        INSERT INTO events (type, subject, machine_id, reason, details)
        SELECT 'KubeletNotAccepted', m.id, m.id,
               'a launch passed it over: its kubelet v' || (m.kubelet_version / 1000) || '.' || (m.kubelet_version % 1000)
                 || ' is outside what the join''s control plane accepts (v' || (v_oldest / 1000) || '.'
                 || (v_oldest % 1000) || ' to v' || (v_newest / 1000) || '.' || (v_newest % 1000)
                 || '): boot it into an image of a version in that range',
               jsonb_build_object('oldest', (v_oldest / 1000) || '.' || (v_oldest % 1000),
                                  'newest', (v_newest / 1000) || '.' || (v_newest % 1000))
        FROM machines m
        WHERE m.id = ANY (v_passed)
          AND NOT EXISTS (SELECT 1 FROM events e WHERE e.machine_id = m.id AND e.type = 'KubeletNotAccepted'
                          AND e.at > now() - interval '1 minute');
      END IF;
      v_outcomes := v_outcomes || jsonb_build_object(
        'outcome', CASE WHEN v_capped THEN 'quota-exceeded' ELSE 'insufficient' END,
        'claimable', v_n, 'shapes', to_jsonb(v_names), 'project', p_projects[i],
        'kubeletVersions', CASE WHEN v_newest IS NULL THEN NULL
          ELSE jsonb_build_object('oldest', (v_oldest / 1000) || '.' || (v_oldest % 1000),
                                  'newest', (v_newest / 1000) || '.' || (v_newest % 1000)) END,
        'passedOver', CASE WHEN v_newest IS NULL THEN NULL ELSE cardinality(v_passed) END,
        -- In use: the project's live instances and what this batch's earlier requests claimed for it.
        'quotas', (
          SELECT jsonb_object_agg(q.shape, jsonb_build_object('maxInstances', q.max_instances, 'inUse', q.in_use
            + (SELECT count(*) FROM unnest(v_requests, v_shapes, v_handed) AS b(request, shape, handed)
               WHERE b.shape = q.shape AND p_projects[b.request] = p_projects[i] AND b.handed IS NULL)))
          FROM project_quota_use q WHERE q.project = p_projects[i] AND q.shape = ANY (v_names)),
        -- Per shape: the free machines by state, and for a request that names a cluster the machines pre-joined
        -- to it for its project (what allowPreJoined takes).
        'available', (
          SELECT jsonb_object_agg(n, by_state) FROM (
            SELECT n, jsonb_build_object('warm', count(m.id) FILTER (WHERE m.state = 'warm'),
                                         'preparing', count(m.id) FILTER (WHERE m.state = 'preparing'),
                                         'standby', count(m.id) FILTER (WHERE m.state = 'standby'))
                      || CASE WHEN v_server IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('preJoined', (
              SELECT count(*) FROM machines pm JOIN instances s ON s.id = pm.instance_id
              WHERE pm.shape = n AND pm.state = 'pre-joined' AND NOT pm.cordoned
                AND s.standby AND s.state = 'running' AND s.project = p_projects[i]
                AND s.api_server = v_server AND s.ca_cert_hash = v_hash
                AND (p_machine_labels[i] = '{}' OR pm.labels @> p_machine_labels[i])
                AND pm.id <> ALL (v_machines))) END AS by_state
            FROM unnest(v_names) AS n
            LEFT JOIN machines m ON m.shape = n AND NOT m.cordoned AND m.instance_id IS NULL
                                  AND (p_machine_labels[i] = '{}' OR m.labels @> p_machine_labels[i])
                                  AND (v_newest IS NULL OR m.kubelet_version IS NULL
                                       OR m.kubelet_version BETWEEN v_oldest AND v_newest)
                                  AND m.id <> ALL (v_machines)
            GROUP BY n) per_shape));
      CONTINUE;
    END IF;

    IF p_client_tokens[i] IS NULL THEN
      INSERT INTO launches (id, caller, client_token, request_hash, project)
      VALUES (p_launch_ids[i], p_callers[i], NULL, p_request_hashes[i], p_projects[i]);
    END IF;
    v_outcomes := v_outcomes || jsonb_build_object('outcome', 'launched', 'launchId', p_launch_ids[i],
      'createdAt', now(), 'instances', coalesce((
        SELECT jsonb_agg(jsonb_build_object('id', p_instance_ids[v_slots[k]], 'machineId', v_machines[k], 'shape', v_shapes[k],
                                            'address', v_addresses[k], 'preJoined', v_handed[k] IS NOT NULL) ORDER BY k)
        FROM generate_series(v_first, v_first + v_n - 1) AS k), '[]'::jsonb));
  END LOOP;

  IF coalesce(array_length(v_machines, 1), 0) = 0 THEN
    RETURN v_outcomes;
  END IF;

  -- The standby instances whose pre-joined machines were taken end (the machine stays joined: no reset). A statement
  -- of its own, run only when there are some, by primary key: the batch's statement below would otherwise join the
  -- instances table on every call.
  IF array_remove(v_handed, NULL) <> '{}' THEN
    UPDATE instances s SET state = 'terminated', state_reason = 'handed over to instance ' || p_instance_ids[t.slot],
      terminated_at = now()
    FROM unnest(v_handed, v_slots) AS t(handed_from, slot)
    WHERE s.id = ANY (array_remove(v_handed, NULL)) AND s.id = t.handed_from AND s.state = 'running';
  END IF;

  WITH input AS (
    SELECT machine_id, request, p_instance_ids[slot] AS instance_id, p_join_ids[slot] AS join_id,
           p_prepare_ids[slot] AS prepare_id, shape, prev_state, handed_from
    FROM unnest(v_machines, v_requests, v_slots, v_shapes, v_prev, v_handed)
      AS t(machine_id, request, slot, shape, prev_state, handed_from)
  ), bound AS (
    UPDATE machines m SET instance_id = input.instance_id,
      state = CASE m.state WHEN 'warm' THEN 'joining' WHEN 'standby' THEN 'preparing' WHEN 'pre-joined' THEN 'in-use'
                           ELSE m.state END,
      state_changed_at = CASE WHEN m.state IN ('warm', 'standby', 'pre-joined') THEN now() ELSE m.state_changed_at END
    FROM input WHERE m.id = input.machine_id
  ), launched AS (
    INSERT INTO instances (id, launch_id, machine_id, shape, state, labels, kubernetes, secrets, has_user_data,
                           project, standby, pre_joined, api_server, ca_cert_hash, running_at)
    SELECT instance_id, p_launch_ids[request], machine_id, shape,
           CASE WHEN handed_from IS NULL THEN 'pending' ELSE 'running' END, p_labels[request],
           nullif(p_kubernetes[request], 'null'), CASE WHEN handed_from IS NULL THEN p_secrets[request] END,
           p_has_user_data[request], p_projects[request], p_standby[request], handed_from IS NOT NULL,
           CASE WHEN p_standby[request] THEN p_kubernetes[request] ->> 'apiServer' END,
           CASE WHEN p_standby[request] THEN p_kubernetes[request] ->> 'caCertHash' END,
           CASE WHEN handed_from IS NOT NULL THEN now() END
    FROM input
  ), queued AS (
    INSERT INTO commands (id, machine_id, instance_id, type, status)
    SELECT prepare_id, machine_id, NULL, 'prepare', 'queued' FROM input WHERE prev_state = 'standby'
    UNION ALL
    SELECT join_id, machine_id, instance_id, 'join', 'queued' FROM input WHERE handed_from IS NULL
    ORDER BY 3 NULLS FIRST -- prepares before joins: a lower seq
  )
  INSERT INTO events (type, subject, machine_id, instance_id, from_state, to_state, reason)
  SELECT 'CommandQueued', prepare_id, machine_id, NULL, NULL, 'queued', 'prepare' FROM input
  WHERE prev_state = 'standby'
  UNION ALL
  SELECT 'InstanceState', handed_from, machine_id, handed_from, 'running', 'terminated',
         'handed over to instance ' || instance_id
  FROM input WHERE handed_from IS NOT NULL
  UNION ALL
  SELECT 'InstanceState', instance_id, machine_id, instance_id, NULL, 'pending', 'launched' FROM input
  WHERE handed_from IS NULL
  UNION ALL
  SELECT 'InstanceState', instance_id, machine_id, instance_id, NULL, 'running', 'launched on a pre-joined machine'
  FROM input WHERE handed_from IS NOT NULL
  UNION ALL
  SELECT 'MachineState', machine_id, machine_id, instance_id, 'pre-joined', 'in-use',
         'claimed pre-joined (was instance ' || handed_from || '''s)'
  FROM input WHERE handed_from IS NOT NULL
  UNION ALL
  SELECT 'MachineState', machine_id, machine_id, instance_id, 'warm', 'joining', 'claimed' FROM input
  WHERE prev_state = 'warm'
  UNION ALL
  SELECT 'MachineState', machine_id, machine_id, instance_id, 'standby', 'preparing', 'claimed from standby'
  FROM input WHERE prev_state = 'standby'
  UNION ALL
  SELECT 'CommandQueued', join_id, machine_id, instance_id, NULL, 'queued', 'join' FROM input WHERE handed_from IS NULL;

  RETURN v_outcomes;
END
$$;

ALTER FUNCTION launch_instances_batch(text[], text[], text[], bytea[], jsonb[], boolean[], integer[], integer[],
    jsonb[], jsonb[], bytea[], boolean[], boolean[], jsonb[], text[], text[], text[], text[], boolean[], boolean[])
  SET plan_cache_mode = force_generic_plan;

-- The signature before pre-joined standby (V24), for API replicas of the previous version during a rolling upgrade:
-- their launches are neither standby nor take pre-joined machines.
CREATE OR REPLACE FUNCTION launch_instances_batch(
    p_launch_ids text[], p_callers text[], p_client_tokens text[], p_request_hashes bytea[],
    p_shapes jsonb[], p_allow_preparing boolean[], p_mins integer[], p_maxes integer[],
    p_labels jsonb[], p_kubernetes jsonb[], p_secrets bytea[], p_has_user_data boolean[], p_allow_standby boolean[],
    p_machine_labels jsonb[], p_instance_ids text[], p_join_ids text[], p_prepare_ids text[], p_projects text[])
  RETURNS jsonb[]
  LANGUAGE sql AS $$
  SELECT launch_instances_batch(p_launch_ids, p_callers, p_client_tokens, p_request_hashes, p_shapes,
      p_allow_preparing, p_mins, p_maxes, p_labels, p_kubernetes, p_secrets, p_has_user_data, p_allow_standby,
      p_machine_labels, p_instance_ids, p_join_ids, p_prepare_ids, p_projects,
      array_fill(false, ARRAY[coalesce(array_length(p_launch_ids, 1), 0)]),
      array_fill(false, ARRAY[coalesce(array_length(p_launch_ids, 1), 0)]))
$$;

-- The signature before projects, for API replicas of the previous version during a rolling upgrade: their
-- launches go to the project 'default', where everything of theirs was moved.
CREATE OR REPLACE FUNCTION launch_instances_batch(
    p_launch_ids text[], p_callers text[], p_client_tokens text[], p_request_hashes bytea[],
    p_shapes jsonb[], p_allow_preparing boolean[], p_mins integer[], p_maxes integer[],
    p_labels jsonb[], p_kubernetes jsonb[], p_secrets bytea[], p_has_user_data boolean[], p_allow_standby boolean[],
    p_machine_labels jsonb[], p_instance_ids text[], p_join_ids text[], p_prepare_ids text[])
  RETURNS jsonb[]
  LANGUAGE sql AS $$
  SELECT launch_instances_batch(p_launch_ids, p_callers, p_client_tokens, p_request_hashes, p_shapes,
      p_allow_preparing, p_mins, p_maxes, p_labels, p_kubernetes, p_secrets, p_has_user_data, p_allow_standby,
      p_machine_labels, p_instance_ids, p_join_ids, p_prepare_ids,
      array_fill('default'::text, ARRAY[coalesce(array_length(p_launch_ids, 1), 0)]),
      array_fill(false, ARRAY[coalesce(array_length(p_launch_ids, 1), 0)]),
      array_fill(false, ARRAY[coalesce(array_length(p_launch_ids, 1), 0)]))
$$;

-- The single-launch signatures, for API replicas of earlier versions during a rolling upgrade: one request through
-- the batch, its refusals raised as before (WM503: too few machines, with what is there as the detail; WM400: no
-- such shape). Those replicas do not mint the ids, so this does, in the API's formats (crypto/Ids).
CREATE OR REPLACE FUNCTION launch_instances(
    p_launch_id text, p_caller text, p_client_token text, p_request_hash bytea,
    p_shapes text[], p_allow_preparing boolean, p_min integer, p_max integer,
    p_labels jsonb, p_kubernetes jsonb, p_secrets bytea, p_has_user_data boolean, p_allow_standby boolean,
    p_machine_labels jsonb)
  RETURNS jsonb
  LANGUAGE plpgsql AS $$
DECLARE
  v_outcome jsonb;
BEGIN
  v_outcome := (launch_instances_batch(ARRAY[p_launch_id], ARRAY[p_caller], ARRAY[p_client_token],
      ARRAY[p_request_hash], ARRAY[to_jsonb(p_shapes)], ARRAY[p_allow_preparing], ARRAY[p_min], ARRAY[p_max],
      ARRAY[p_labels], ARRAY[p_kubernetes], ARRAY[p_secrets], ARRAY[p_has_user_data], ARRAY[p_allow_standby],
      ARRAY[p_machine_labels],
      ARRAY(SELECT 'i-' || substr(md5(gen_random_uuid()::text), 1, 17) FROM generate_series(1, p_max)),
      ARRAY(SELECT 'cmd-' || substr(md5(gen_random_uuid()::text), 1, 16) FROM generate_series(1, p_max)),
      ARRAY(SELECT 'cmd-' || substr(md5(gen_random_uuid()::text), 1, 16) FROM generate_series(1, p_max)),
      ARRAY['default'], ARRAY[false], ARRAY[false]))[1];
  CASE v_outcome->>'outcome'
    WHEN 'insufficient', 'quota-exceeded' THEN
      RAISE EXCEPTION 'insufficient capacity' USING ERRCODE = 'WM503', DETAIL = v_outcome::text;
    WHEN 'no-such-shape' THEN
      RAISE EXCEPTION 'no such shape' USING ERRCODE = 'WM400';
    ELSE
      RETURN v_outcome;
  END CASE;
END
$$;

-- The client tokens' key before V21, (project, caller, client_token), goes in the transaction that replaced the
-- function naming it in ON CONFLICT, so no launch meets a function whose arbiter is gone.
ALTER TABLE launches DROP CONSTRAINT IF EXISTS launches_project_caller_client_token_key;
