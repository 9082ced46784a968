-- Reporting, part 2: the dashboard's figures (domain::reporting::figures) and the spreadsheet
-- exports (POST /reporting/export), which are polled jobs (jobs::exports): the export's row is
-- written with its job in one transaction, the job writes the file to the document store under
-- Exports/ and completes the row, and the scheduler's expiry job removes the file once
-- expires_at has passed.

-- The figures' stays: every figure reads the CONFIRMED reservations, and apart the OWNER_STAY
-- ones, that overlap a range of nights (check_in < to AND check_out > from). The range is
-- scanned by check_out, and the columns the figures read are in the index, so the scan does not
-- visit the table; one partial index per status, so neither scan reads the other's entries.
CREATE INDEX pms_reservations_stays ON pms_reservations (check_out, check_in)
    INCLUDE (listing_pms_id, total_amount, currency)
    WHERE status = 'CONFIRMED';
CREATE INDEX pms_reservations_owner_stays ON pms_reservations (check_out, check_in)
    INCLUDE (listing_pms_id)
    WHERE status = 'OWNER_STAY';
-- Currencies are compared as stored (the sync now upper-cases them): rows stored before.
UPDATE pms_reservations SET currency = upper(currency) WHERE currency <> upper(currency);
UPDATE pms_listings SET currency = upper(currency) WHERE currency <> upper(currency);

CREATE TABLE reporting_exports (
    id            uuid PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('reservations', 'listings', 'occupancy', 'revenue')),
    format        text NOT NULL CHECK (format IN ('excel', 'csv')),
    -- The export as requested, defaults applied (domain::reporting::exports::ExportSpec): what
    -- the job reads back, so that every attempt writes the same file.
    params        jsonb NOT NULL,
    -- PROCESSING → COMPLETED or FAILED; COMPLETED → EXPIRED when the expiry job removed the file.
    -- Read through domain::reporting::exports, which also shows a COMPLETED export past its
    -- expires_at as EXPIRED, and a PROCESSING one whose job is over without it as FAILED.
    status        text NOT NULL DEFAULT 'PROCESSING'
                  CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED')),
    -- Percent of the rows written, by the attempt running (a retried attempt starts again at 0).
    progress      smallint NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
    row_count     bigint,
    -- What the download is called (`<type>_<start>_<end>.<xlsx|csv>`).
    file_name     text NOT NULL,
    -- Where the file is in the document store: set when COMPLETED, cleared when EXPIRED.
    storage_path  text,
    size_bytes    bigint,
    -- The job writing the file. Not a foreign key, as pms_sync_runs.job_id: the scheduler purges
    -- finished jobs, and an export still PROCESSING whose job is finished or gone must be seen
    -- as failed.
    job_id        uuid,
    -- The token subject that asked for it.
    requested_by  text,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    expires_at    timestamptz,
    CONSTRAINT reporting_exports_completed_file
        CHECK (status <> 'COMPLETED' OR (storage_path IS NOT NULL AND expires_at IS NOT NULL))
);
-- The list's order (newest first).
CREATE INDEX reporting_exports_created ON reporting_exports (created_at DESC, id DESC);
-- The expiry job: the COMPLETED exports whose time is up.
CREATE INDEX reporting_exports_expiry ON reporting_exports (expires_at) WHERE status = 'COMPLETED';
