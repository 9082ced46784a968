-- The owner statement export (issue 32): a type of the exports family.
ALTER TABLE reporting_exports DROP CONSTRAINT reporting_exports_kind_check;
ALTER TABLE reporting_exports ADD CONSTRAINT reporting_exports_kind_check
    CHECK (kind IN ('reservations', 'listings', 'occupancy', 'revenue', 'ownerStatement'));
