-- Records the PMS no longer has (issue 27): a full sync that completes retires the listings and
-- reservations it did not meet (Hostaway simply stops returning a deleted record), so that their
-- nights leave every figure; a later sync that meets one again brings it back
-- (domain::reporting::sync_runs::retire_unmet, jobs::pms).

-- A retired listing is INACTIVE and says why; it keeps its villa link.
ALTER TABLE pms_listings ADD COLUMN removed_from_pms boolean NOT NULL DEFAULT false;

-- A retired reservation is REMOVED, which counts for nothing in any figure (they read CONFIRMED
-- and OWNER_STAY only); `pms_status` keeps what the PMS last said of it.
ALTER TABLE pms_reservations DROP CONSTRAINT pms_reservations_status_check;
-- Added NOT VALID, then validated: the check of every stored row then holds no lock that stops
-- the syncs and the reads meanwhile (the set only grows, so every row passes).
ALTER TABLE pms_reservations ADD CONSTRAINT pms_reservations_status_check
    CHECK (status IN ('CONFIRMED', 'PENDING', 'CANCELLED', 'OWNER_STAY', 'INQUIRY', 'DECLINED', 'EXPIRED',
                      'UNKNOWN', 'REMOVED')) NOT VALID;
ALTER TABLE pms_reservations VALIDATE CONSTRAINT pms_reservations_status_check;

-- pms_sync_seen (0012) now also decides what a run retires: what it did not meet. It is UNLOGGED,
-- so a crash of Postgres empties it while the run's resume point stays, and the run would then
-- retire every record it met before the crash. Each run therefore writes one row of its own
-- there when it starts (entity 'run', pms_id 0, with the run in one transaction): a run that no
-- longer finds it knows that what it met is incomplete, and retires nothing. The row goes with
-- the run's others when the run finishes.
