-- A client token names one launch within its project, whichever of the project's API tokens sent it (EC2 scopes a
-- client token to the account): a controller whose credential was rotated retries its launch and gets the same one.
--
-- Until now the key was (project, caller, client_token), so a database may hold one client token under two callers
-- of a project. Those rows are kept as they are: the oldest launch per (project, client_token) holds the token for
-- the project from now on, and the later ones are marked token_per_caller — still unique per caller (their own
-- index), and a retry by the caller that made one still gets it (the launch function looks there first). No row
-- is rewritten or dropped, and nothing a client was answered before changes meaning.
ALTER TABLE launches ADD COLUMN token_per_caller boolean NOT NULL DEFAULT false;

UPDATE launches SET token_per_caller = true
WHERE id IN (SELECT id FROM (
    SELECT id, row_number() OVER (PARTITION BY project, client_token ORDER BY created_at, id) AS nth
    FROM launches WHERE client_token IS NOT NULL) ranked
  WHERE nth > 1);

CREATE UNIQUE INDEX launches_project_client_token ON launches (project, client_token) WHERE NOT token_per_caller;
CREATE UNIQUE INDEX launches_token_per_caller ON launches (project, caller, client_token) WHERE token_per_caller;

-- The old key, launches_project_caller_client_token_key, is dropped by R__launch_instances.sql in the transaction
-- that replaces the function naming it in ON CONFLICT: API replicas launching while this runs never meet a function
-- whose arbiter is gone.
