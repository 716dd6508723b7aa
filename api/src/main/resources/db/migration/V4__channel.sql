-- The agent channel.

-- Every queued command wakes the replica holding its machine's connection: NOTIFY is delivered at commit, so a
-- command is announced exactly when it exists for everyone (identical notifications in one transaction fold into
-- one). A replica that was not listening catches up with a query whenever it (re)subscribes.
CREATE FUNCTION notify_command() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('warmmetal_commands', NEW.machine_id);
  RETURN NULL;
END
$$;
CREATE TRIGGER commands_notify AFTER INSERT ON commands FOR EACH ROW EXECUTE FUNCTION notify_command();

-- When the machine's agent was last heard from (written in batches by the replica holding the connection), and the
-- state an offline machine goes back to when its agent returns.
ALTER TABLE machines ADD COLUMN last_seen timestamptz;
ALTER TABLE machines ADD COLUMN offline_from text;

-- When a command first went out to its agent: a join's timeout counts from there.
ALTER TABLE commands ADD COLUMN delivered_at timestamptz;
