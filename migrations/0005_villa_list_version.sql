-- Counting the villas that match a search visits every matching row (tens of milliseconds at
-- 100,000 villas for a common word), so the API caches the management list's totals per
-- (status, search). A cached total is tagged with this counter, which every change of what the
-- list filters on bumps in the same transaction: a total is reused only while nothing it counts
-- has changed, on whichever API replica cached it.
CREATE TABLE villa_list_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version   bigint  NOT NULL
);
INSERT INTO villa_list_version VALUES (true, 1);

CREATE FUNCTION bump_villa_list_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE villa_list_version SET version = version + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER villas_list_rows_changed AFTER INSERT OR DELETE OR TRUNCATE ON villas
    FOR EACH STATEMENT EXECUTE FUNCTION bump_villa_list_version();
-- Only updates that change a searched or filtered column (edits of a villa's other fields, and
-- the version bumps of the wizard's saves, leave the totals alone).
CREATE TRIGGER villas_list_columns_changed AFTER UPDATE ON villas
    FOR EACH ROW WHEN (OLD.villa_name IS DISTINCT FROM NEW.villa_name
                    OR OLD.villa_code IS DISTINCT FROM NEW.villa_code
                    OR OLD.city IS DISTINCT FROM NEW.city
                    OR OLD.country IS DISTINCT FROM NEW.country
                    OR OLD.status IS DISTINCT FROM NEW.status
                    OR OLD.is_active IS DISTINCT FROM NEW.is_active)
    EXECUTE FUNCTION bump_villa_list_version();
