-- Every launch wrote rows referencing the same project row, and each foreign-key check locks it (FOR KEY SHARE):
-- concurrent launches piled their locks onto one row (multixacts) and single-launch pgbench fell by a quarter. A
-- launch's project is always one that exists (its token's, which keeps its foreign key, or one the API looked up
-- for an operator), and projects are never deleted, so launches and instances need not check it again.
ALTER TABLE launches DROP CONSTRAINT launches_project_fkey;
ALTER TABLE instances DROP CONSTRAINT instances_project_fkey;
