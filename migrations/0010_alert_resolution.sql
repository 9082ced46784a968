-- A person's resolution of a stock alert holds while its cause lasts (domain::inventory::alerts).
--
-- An alert keeps its item-and-type slot (`cause_present`) from the evaluation that raised it until
-- an evaluation sees its cause gone, whether it is still open or a person resolved it meanwhile.
-- The evaluation's upsert then meets the resolved alert in the slot and leaves it be, instead of
-- raising the unchanged cause again. The slot is freed when the cause clears (an open alert is
-- resolved AUTO_RESOLVED then) or, for an alert a person resolved, when the cause gets worse than
-- the severity it was resolved at (a LOW_STOCK WARNING reaching 0, an expiry date passing): the
-- next evaluation raises a new alert. One row per slot is a unique index, so concurrent
-- evaluations and a person's resolution meet on that row's lock, never on a check made before.
ALTER TABLE inventory_alerts ADD COLUMN cause_present boolean NOT NULL DEFAULT true;
-- Alerts resolved before this rule: their cause's later alerts were already raised.
UPDATE inventory_alerts SET cause_present = false WHERE status = 'RESOLVED';
-- An open alert always holds its slot, so one slot per item and type is also one open alert.
ALTER TABLE inventory_alerts ADD CONSTRAINT inventory_alerts_open_holds_slot
    CHECK (status = 'RESOLVED' OR cause_present);
DROP INDEX inventory_alerts_one_open;
CREATE UNIQUE INDEX inventory_alerts_one_per_cause ON inventory_alerts (item_id, type) WHERE cause_present;
