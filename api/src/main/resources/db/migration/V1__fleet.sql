-- WarmMetal schema, version 1: the fleet, its pools, instances, the durable command queue, events and API tokens.

CREATE TABLE shapes (
  name            text PRIMARY KEY,
  arch            text    NOT NULL,
  cpus            integer NOT NULL,
  memory_gib      integer NOT NULL,
  gpus            jsonb   NOT NULL DEFAULT '[]',
  alias           text UNIQUE,
  price_per_hour  numeric,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE machines (
  seq               bigserial UNIQUE,
  id                text PRIMARY KEY,
  name              text NOT NULL,
  state             text NOT NULL,
  shape             text NOT NULL REFERENCES shapes(name),
  address           text,
  facts             jsonb NOT NULL,
  labels            jsonb NOT NULL DEFAULT '{}',
  system_uuid       text UNIQUE,
  primary_mac       text UNIQUE,
  cordoned          boolean NOT NULL DEFAULT false,
  instance_id       text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  state_changed_at  timestamptz NOT NULL DEFAULT now()
);
-- The claim path: warm (or preparing) machines of a shape.
CREATE INDEX machines_claimable ON machines (shape, state) WHERE NOT cordoned AND instance_id IS NULL;
CREATE INDEX machines_labels ON machines USING gin (labels);

CREATE TABLE pools (
  shape       text PRIMARY KEY REFERENCES shapes(name),
  min_warm    integer NOT NULL CHECK (min_warm >= 0),
  max_warm    integer NOT NULL CHECK (max_warm >= min_warm),
  deficit     integer NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_tokens (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  role        text NOT NULL CHECK (role IN ('admin', 'client', 'read-only')),
  token_hash  bytea NOT NULL UNIQUE,
  bootstrap   boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);
CREATE UNIQUE INDEX api_tokens_one_bootstrap ON api_tokens (bootstrap) WHERE bootstrap;

-- One row per launch request; the idempotency record of a clientToken (unique per caller).
CREATE TABLE launches (
  id            text PRIMARY KEY,
  caller        text NOT NULL,
  client_token  text,
  request_hash  bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (caller, client_token)
);

CREATE TABLE instances (
  seq              bigserial UNIQUE,
  id               text PRIMARY KEY,
  launch_id        text NOT NULL REFERENCES launches(id),
  machine_id       text NOT NULL REFERENCES machines(id),
  shape            text NOT NULL,
  state            text NOT NULL,
  state_reason     text,
  labels           jsonb NOT NULL DEFAULT '{}',
  kubernetes       jsonb,              -- join parameters without secrets
  secrets          bytea,              -- AES-GCM sealed {bootstrapToken, userData}
  has_user_data    boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  running_at       timestamptz,
  terminated_at    timestamptz
);
CREATE INDEX instances_launch ON instances (launch_id);
CREATE INDEX instances_machine ON instances (machine_id);
CREATE INDEX instances_state ON instances (state, seq);
CREATE INDEX instances_labels ON instances USING gin (labels);

-- The durable command queue the agent channel delivers, in seq order per machine.
CREATE TABLE commands (
  seq          bigserial UNIQUE,
  id           text PRIMARY KEY,
  machine_id   text NOT NULL REFERENCES machines(id),
  instance_id  text,
  type         text NOT NULL CHECK (type IN ('prepare', 'join', 'reset', 'reboot')),
  status       text NOT NULL CHECK (status IN ('queued', 'delivered', 'succeeded', 'failed', 'cancelled')),
  message      text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
CREATE INDEX commands_machine ON commands (machine_id, seq);
CREATE INDEX commands_open ON commands (machine_id, seq) WHERE status IN ('queued', 'delivered');

CREATE TABLE events (
  seq          bigserial PRIMARY KEY,
  at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  type         text NOT NULL,
  subject      text NOT NULL,
  machine_id   text,
  instance_id  text,
  from_state   text,
  to_state     text,
  reason       text,
  details      jsonb
);
CREATE INDEX events_machine ON events (machine_id, seq);
CREATE INDEX events_instance ON events (instance_id, seq);
