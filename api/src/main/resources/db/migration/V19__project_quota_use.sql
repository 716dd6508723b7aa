-- A project's quotas with what each has in use (live instances: pending, running, shutting-down), the one place
-- that says what counts; the API's project and shape reads and the launch function's refusals read it.
CREATE VIEW project_quota_use AS
  SELECT q.project, q.shape, q.max_instances,
         (SELECT count(*) FROM instances i WHERE i.project = q.project AND i.shape = q.shape
            AND i.state IN ('pending', 'running', 'shutting-down')) AS in_use
  FROM project_quotas q;
