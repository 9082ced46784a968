-- Exports, part 2 (issue 27): a request identical to one already PROCESSING, or COMPLETED and
-- not expired on data no sync has changed since, answers that export instead of making the
-- file again; a caller has at most a few exports PROCESSING at once.
--
-- What was asked, as one key: the md5 of the export's type, format and params (defaults
-- applied, listing ids sorted), written by domain::reporting::exports::create. NULL for the
-- exports made before this column, which are never reused.
ALTER TABLE reporting_exports ADD COLUMN request_key text;
CREATE INDEX reporting_exports_request ON reporting_exports (request_key, created_at DESC)
    WHERE status IN ('PROCESSING', 'COMPLETED');
-- A caller's exports being made (the quota).
CREATE INDEX reporting_exports_processing ON reporting_exports (requested_by)
    WHERE status = 'PROCESSING';
