-- Generated work orders follow what changed since they were placed (their rule, their villa,
-- their stay's dates), once per change, and nothing else: between changes a person's edits to a
-- work order (another day, another title) stay. Each rule change bumps the rule's revision.
ALTER TABLE task_rules ADD COLUMN revision integer NOT NULL DEFAULT 1 CHECK (revision >= 1);

ALTER TABLE work_orders
    -- The revision of its rule the work order last followed.
    ADD COLUMN task_rule_revision integer,
    -- The stay's dates when the work order was last placed: whether the stay moved since, and
    -- `reservationChanged` meaning the stay changed after the work started, not the rule.
    ADD COLUMN stay_check_in      date,
    ADD COLUMN stay_check_out     date;

-- Open work orders made before this are left without them: the next run places them once, as
-- every run did before. Started and finished ones were flagged by every run before this, so the
-- stay as it is now is the one they were last compared with.
UPDATE work_orders w
SET stay_check_in = r.check_in, stay_check_out = r.check_out
FROM pms_reservations r
WHERE r.id = w.reservation_id AND w.task_rule_id IS NOT NULL
  AND w.status IN ('IN_PROGRESS', 'COMPLETED');

-- A follow-up repair belongs to one item: unique among the items that have one (nearly all have
-- none, and the full index cost the generation a twelfth of its checklist inserts).
ALTER TABLE work_order_checklist_items
    DROP CONSTRAINT work_order_checklist_items_follow_up_work_order_id_key;
CREATE UNIQUE INDEX work_order_checklist_items_follow_up
    ON work_order_checklist_items (follow_up_work_order_id)
    WHERE follow_up_work_order_id IS NOT NULL;
