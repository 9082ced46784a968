-- Planned-maintenance generation reads what is due, not every occurrence since each schedule
-- started: a SCHEDULED_DATE schedule keeps its cursor, the first occurrence not generated yet
-- (`next_due`). A generation run reads the schedules whose cursor falls within its horizon, creates
-- the work orders from the cursor (or from PM_CATCH_UP_DAYS back, whichever is later) to the
-- horizon, and moves the cursor past the horizon in the same statement. A COMPLETED_DATE schedule
-- has no cursor: its one pending occurrence counts from the last completion.
ALTER TABLE pm_schedules ADD COLUMN next_due date;

-- Existing schedules: the first occurrence after the latest one that has a work order, or the start.
UPDATE pm_schedules s SET next_due = coalesce(
    (SELECT min(o.occurrence)
     FROM (SELECT max(w.occurrence_date) AS last FROM work_orders w WHERE w.schedule_id = s.id) m,
          pm_occurrences(s.start_date, s.frequency, m.last, m.last + pm_max_days(s.frequency)) o
     WHERE m.last IS NOT NULL),
    s.start_date)
WHERE s.basis = 'SCHEDULED_DATE';

-- Without a cursor a SCHEDULED_DATE schedule would silently never be generated again.
ALTER TABLE pm_schedules ADD CONSTRAINT pm_schedules_next_due_check
    CHECK ((basis = 'SCHEDULED_DATE') = (next_due IS NOT NULL));

-- A tick finds the schedules due by its horizon, and the COMPLETED_DATE ones, without reading the others.
CREATE INDEX pm_schedules_due ON pm_schedules (next_due) WHERE basis = 'SCHEDULED_DATE';
CREATE INDEX pm_schedules_completed_basis ON pm_schedules (id) WHERE basis = 'COMPLETED_DATE';

-- The list's order (newest first, then id descending), read in one direction.
DROP INDEX pm_schedules_created;
CREATE INDEX pm_schedules_created ON pm_schedules (created_at DESC, id DESC);
