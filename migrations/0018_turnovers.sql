-- Operations driven by reservations: task rules that turn the PMS calendar into work orders
-- (turnovers, inspections), checklists whose failed items open repairs, and the consumables a
-- completed turnover draws from the villa's stock.

-- A rule: which stays (its villas, owner stays or not), when (the trigger's date plus an offset,
-- or every few nights of a long stay), and what work order it makes.
CREATE TABLE task_rules (
    id                   uuid PRIMARY KEY,
    name                 text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    trigger              text NOT NULL CHECK (trigger IN ('CHECKOUT', 'CHECKIN', 'MID_STAY')),
    offset_days          integer NOT NULL DEFAULT 0 CHECK (offset_days BETWEEN -30 AND 30),
    -- MID_STAY only: one occurrence after every this many nights of a longer stay.
    every_nights         integer CHECK (every_nights BETWEEN 2 AND 60),
    category             text NOT NULL CHECK (category IN ('HVAC', 'ELECTRICAL', 'PLUMBING', 'WATER', 'POOL',
                             'GARDEN', 'APPLIANCE', 'STRUCTURAL', 'PEST_CONTROL', 'CLEANING', 'SECURITY',
                             'IT_NETWORK', 'GENERAL', 'OTHER', 'INSPECTION')),
    priority             text NOT NULL DEFAULT 'MEDIUM' CHECK (priority IN ('LOW', 'MEDIUM', 'HIGH', 'URGENT')),
    -- The work orders' title; the rule's name when null.
    title                text CHECK (char_length(title) BETWEEN 1 AND 200),
    default_assignee_id  uuid REFERENCES staff (id) ON DELETE SET NULL,
    include_owner_stays  boolean NOT NULL DEFAULT false,
    -- [{text, kind, failCategory}], at most 100 (checked by the API).
    checklist            jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(checklist) = 'array'),
    -- [{itemSku, perStay, perNight}], at most 50 (checked by the API).
    consumables          jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(consumables) = 'array'),
    -- Archived rules generate nothing; their work orders stay as they are.
    archived_at          timestamptz,
    created_by           text NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK ((trigger = 'MID_STAY') = (every_nights IS NOT NULL))
);
CREATE INDEX task_rules_created ON task_rules (created_at DESC, id DESC);

-- The villas a rule applies to; none means every villa linked to a listing.
CREATE TABLE task_rule_villas (
    task_rule_id  uuid NOT NULL REFERENCES task_rules (id) ON DELETE CASCADE,
    villa_id      uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    PRIMARY KEY (task_rule_id, villa_id)
);
CREATE INDEX task_rule_villas_villa ON task_rule_villas (villa_id);

-- Work orders: where each came from, and for generated ones the stay and the occurrence.
ALTER TABLE work_orders DROP CONSTRAINT work_orders_category_check;
ALTER TABLE work_orders ADD CONSTRAINT work_orders_category_check
    CHECK (category IN ('HVAC', 'ELECTRICAL', 'PLUMBING', 'WATER', 'POOL', 'GARDEN', 'APPLIANCE',
        'STRUCTURAL', 'PEST_CONTROL', 'CLEANING', 'SECURITY', 'IT_NETWORK', 'GENERAL', 'OTHER',
        'INSPECTION')) NOT VALID;
ALTER TABLE work_orders VALIDATE CONSTRAINT work_orders_category_check;

ALTER TABLE work_orders
    -- MANUAL: opened by a person; PLANNED: planned maintenance; TURNOVER: a task rule;
    -- INSPECTION: a failed checklist item.
    ADD COLUMN source               text NOT NULL DEFAULT 'MANUAL'
                                    CHECK (source IN ('MANUAL', 'PLANNED', 'TURNOVER', 'INSPECTION')),
    ADD COLUMN reservation_id       uuid REFERENCES pms_reservations (id) ON DELETE SET NULL,
    ADD COLUMN task_rule_id         uuid REFERENCES task_rules (id) ON DELETE SET NULL,
    -- Which occurrence of the rule for the stay (0 for CHECKOUT and CHECKIN; n for the n-th
    -- MID_STAY one): the key stays when the stay moves, so the work order moves with it.
    ADD COLUMN occurrence_index     integer CHECK (occurrence_index >= 0),
    ADD COLUMN same_day_turnover    boolean NOT NULL DEFAULT false,
    -- The stay moved or was cancelled after the work started: left as it is, and flagged.
    ADD COLUMN reservation_changed  boolean NOT NULL DEFAULT false,
    -- Cancelled by the generation because its stay was (or the rule no longer applies to it):
    -- brought back if the stay comes back.
    ADD COLUMN stay_cancelled       boolean NOT NULL DEFAULT false,
    ADD COLUMN parent_work_order_id uuid REFERENCES work_orders (id) ON DELETE SET NULL,
    -- What completing it drew from the villa's stock: [{itemSku, wanted, drawn, shortfall}];
    -- null until drawn (once: a reopened work order draws nothing more).
    ADD COLUMN consumables          jsonb,
    ADD COLUMN consumables_drawn_at timestamptz;

UPDATE work_orders SET source = 'PLANNED' WHERE schedule_id IS NOT NULL;

-- One work order per rule, stay and occurrence, whatever the number of generation runs.
CREATE UNIQUE INDEX work_orders_one_per_turnover
    ON work_orders (task_rule_id, reservation_id, occurrence_index)
    WHERE task_rule_id IS NOT NULL AND reservation_id IS NOT NULL;
CREATE INDEX work_orders_reservation ON work_orders (reservation_id) WHERE reservation_id IS NOT NULL;
CREATE INDEX work_orders_due ON work_orders (villa_id, due_date) WHERE due_date IS NOT NULL;
CREATE INDEX work_orders_parent ON work_orders (parent_work_order_id) WHERE parent_work_order_id IS NOT NULL;

-- A work order's checklist, copied from its rule when generated; answered item by item.
CREATE TABLE work_order_checklist_items (
    id                       uuid PRIMARY KEY,
    work_order_id            uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    position                 integer NOT NULL CHECK (position >= 0),
    text                     text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 500),
    kind                     text NOT NULL CHECK (kind IN ('CHECK', 'PHOTO_REQUIRED')),
    fail_category            text NOT NULL DEFAULT 'GENERAL',
    result                   text CHECK (result IN ('PASS', 'FAIL', 'NA')),
    notes                    text CHECK (char_length(notes) <= 2000),
    answered_by              text,
    answered_at              timestamptz,
    field_note_id            uuid REFERENCES field_notes (id) ON DELETE SET NULL,
    -- The repair a FAIL opened: at most one per item.
    follow_up_work_order_id  uuid UNIQUE REFERENCES work_orders (id) ON DELETE SET NULL,
    UNIQUE (work_order_id, position)
);

-- A movement drawn by a work order (its consumables).
ALTER TABLE inventory_movements
    ADD COLUMN work_order_id uuid REFERENCES work_orders (id) ON DELETE SET NULL;
CREATE INDEX inventory_movements_work_order ON inventory_movements (work_order_id)
    WHERE work_order_id IS NOT NULL;
