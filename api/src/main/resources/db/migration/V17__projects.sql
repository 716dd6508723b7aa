-- Tenancy: every API token belongs to a project; launches and instances (and through them their events and client
-- tokens) belong to the project of the token that made them. Machines, pools and shapes stay fleet-wide. What
-- existed before projects moves into the project 'default'.
CREATE TABLE projects (
  name        text PRIMARY KEY CHECK (name ~ '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$'),
  created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO projects (name) VALUES ('default');

-- At most max_instances live instances (pending, running, shutting-down) of a shape per project; no row, no limit.
CREATE TABLE project_quotas (
  project        text    NOT NULL REFERENCES projects (name) ON DELETE CASCADE,
  shape          text    NOT NULL REFERENCES shapes (name) ON DELETE CASCADE,
  max_instances  integer NOT NULL CHECK (max_instances >= 0),
  PRIMARY KEY (project, shape)
);

ALTER TABLE api_tokens ADD COLUMN project text NOT NULL DEFAULT 'default' REFERENCES projects (name);
ALTER TABLE launches ADD COLUMN project text NOT NULL DEFAULT 'default' REFERENCES projects (name);
ALTER TABLE instances ADD COLUMN project text NOT NULL DEFAULT 'default' REFERENCES projects (name);

-- A client token names one launch within its project (the caller stays part of the key, as before).
ALTER TABLE launches DROP CONSTRAINT launches_caller_client_token_key;
ALTER TABLE launches ADD CONSTRAINT launches_project_caller_client_token_key UNIQUE (project, caller, client_token);

CREATE INDEX instances_project ON instances (project, seq);
-- What a quota counts, inside the launch transaction.
CREATE INDEX instances_project_live ON instances (project, shape)
  WHERE state IN ('pending', 'running', 'shutting-down');

-- An operator's read-only view of the whole fleet and every project.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_role_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_role_check
  CHECK (role IN ('admin', 'fleet-reader', 'client', 'read-only', 'boot'));
