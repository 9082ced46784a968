-- The job table: Postgres is the source of truth for every piece of long-running work; Redis
-- (apalis) only carries job ids to workers. A row is written in the same transaction as the change
-- that needs it. See jobs/src/lib.rs for the life cycle.
CREATE TABLE jobs (
    id            uuid PRIMARY KEY,
    kind          text        NOT NULL,
    queue         text        NOT NULL,
    payload       jsonb       NOT NULL,
    status        text        NOT NULL DEFAULT 'QUEUED'
                  CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED')),
    attempts      integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts  integer     NOT NULL CHECK (max_attempts > 0),
    progress      smallint    NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    result        jsonb,
    error         text,
    -- Work that must happen at most once per subject (one folder tree per villa, one scheduler
    -- tick) carries a key; a second enqueue with the same key is a no-op.
    dedupe_key    text,
    -- Not before: a retry waits out its backoff here.
    run_at        timestamptz NOT NULL DEFAULT now(),
    -- When the id was last handed to Redis; the dispatcher re-pushes QUEUED rows whose push is
    -- older than a few seconds (Redis down, Redis restarted empty, crash between commit and push).
    pushed_at     timestamptz,
    -- The lease of the worker running it; a RUNNING row whose lease expired is run again.
    locked_by     text,
    locked_until  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Every job row is written three times (enqueue, claim, finish) and each change of status is a
-- non-HOT update, so each index here costs on every job: only the ones the hot paths need.
-- Lists order by id (UUIDv7, time-ordered), so the primary key serves them.
CREATE UNIQUE INDEX jobs_dedupe ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL;
-- The dispatcher: QUEUED rows never pushed, or pushed long ago.
CREATE INDEX jobs_dispatch ON jobs (queue, (coalesce(pushed_at, '-infinity'::timestamptz)))
    WHERE status = 'QUEUED';
-- The reaper: RUNNING rows whose lease expired.
CREATE INDEX jobs_leased ON jobs (locked_until) WHERE status = 'RUNNING';
