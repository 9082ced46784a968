-- The request that enqueued a job (its X-Request-ID), so that the worker's log lines of the
-- job's run carry the same id as the API's of the request: one id follows a request into the
-- worker that did its work. Null for the scheduler's and the workers' own jobs.
ALTER TABLE jobs ADD COLUMN request_id text;

-- The metrics' per-queue count of failed jobs reads this instead of the finished rows that make
-- up most of the table (queued and running rows have their partial indexes already).
CREATE INDEX jobs_failed ON jobs (queue) WHERE status = 'FAILED';
