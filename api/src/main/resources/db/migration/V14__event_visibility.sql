-- The event log's cursor follows transactions, not insert order. A sequence number is taken at insert but becomes
-- visible at commit, so a reader that had read past a later number could never see an earlier one committed after
-- it (the 300 ms settle delay assumed every transaction ends quickly). Each event now carries the id of the
-- transaction that wrote it; readers take only events of transactions older than every one still running
-- (pg_snapshot_xmin), in (transaction, seq) order — each one exactly once, however long a transaction takes.
ALTER TABLE events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX events_xid ON events (xid, seq);
