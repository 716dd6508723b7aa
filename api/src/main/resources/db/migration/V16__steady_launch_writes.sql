-- Every claim rewrites its machine's index entries (its state is in the claimable index, so the update is never HOT)
-- and every instance adds one: with GIN's pending list the labels' entries pile up, and whichever launch overflows
-- the list merges it all into the index inside its own transaction. PostgreSQL's docs advise turning fastupdate off
-- where consistent response time matters more than update speed: each insert then pays its small share at once.
ALTER INDEX machines_labels SET (fastupdate = off);
ALTER INDEX instances_labels SET (fastupdate = off);

-- The join-timeout sweep looks for delivered joins; without this it read every command ever sent.
CREATE INDEX commands_delivered_joins ON commands (seq) WHERE type = 'join' AND status = 'delivered';

