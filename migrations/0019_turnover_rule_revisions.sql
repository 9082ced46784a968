-- Generated work orders follow a change of their rule once: each rule change bumps the rule's
-- revision, and an open work order behind it takes the rule's title, category and unanswered
-- checklist items. Between two changes a person's edits to the title or category stay.
ALTER TABLE task_rules ADD COLUMN revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1);

ALTER TABLE work_orders
    -- The revision of its rule the work order last followed.
    ADD COLUMN task_rule_revision integer,
    -- The stay's dates when the work order was last placed: `reservationChanged` means the stay
    -- changed after the work started, not that the rule did.
    ADD COLUMN stay_check_in      date,
    ADD COLUMN stay_check_out     date;

UPDATE work_orders w
SET task_rule_revision = 1, stay_check_in = r.check_in, stay_check_out = r.check_out
FROM pms_reservations r
WHERE r.id = w.reservation_id AND w.task_rule_id IS NOT NULL;
