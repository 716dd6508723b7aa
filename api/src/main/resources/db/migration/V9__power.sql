-- Power control: how each machine's power is switched, and what the API last made it.

-- One row per machine with power control. The BMC password is AES-GCM sealed, bound to the machine.
CREATE TABLE machine_power (
  machine_id    text PRIMARY KEY REFERENCES machines(id),
  driver        text NOT NULL CHECK (driver IN ('ipmi', 'redfish', 'ssh')),
  address       text,     -- ipmi, redfish: the BMC
  port          integer,
  username      text,
  secret        bytea,    -- ipmi, redfish: the sealed password
  tls_pin       text,     -- redfish: sha256 of the public key of the BMC's certificate or of its CA
  system_id     text,     -- redfish: the ComputerSystem
  mac           text,     -- ssh: the NIC Wake-on-LAN wakes
  wake_address  text,     -- ssh: where the magic packet goes (a broadcast address)
  wake_port     integer,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- The power the API last switched a machine to (NULL: never switched). A machine switched off is expected to be
-- silent; one switched on is given time to boot before its silence counts.
ALTER TABLE machines ADD COLUMN power_state text CHECK (power_state IN ('on', 'off'));
ALTER TABLE machines ADD COLUMN power_changed_at timestamptz;
