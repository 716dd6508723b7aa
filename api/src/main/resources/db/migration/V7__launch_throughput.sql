-- Two costs that held launches back, measured with pgbench (8 clients, 2 cores, launch_instances alone):

-- 1. launch_instances' statements take parameters (the shape, the random start, the count), so PL/pgSQL's plan
--    cache re-planned them on every call with custom plans; planning was the largest part of a launch's time. The
--    generic plans are the ones wanted anyway (the claimable index, ranged by seq): 1,070 → 1,710 launches/s.
ALTER FUNCTION launch_instances(text, text, text, bytea, text[], boolean, integer, integer, jsonb, jsonb, bytea,
    boolean) SET plan_cache_mode = force_generic_plan;

-- 2. The commands trigger's NOTIFY made every launch a notifying transaction, and PostgreSQL serializes the commits
--    of those behind one lock held across their WAL flush: one fsync at a time, no group commit (+50 % without it).
--    The API announces committed commands itself now (CommandAnnouncer: at once to the agents it holds, by a
--    coalesced NOTIFY after the commit to other replicas, and a periodic catch-up for anything missed).
DROP TRIGGER commands_notify ON commands;
DROP FUNCTION notify_command();
