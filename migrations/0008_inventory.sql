-- Inventory (spec/operations-apis.md, "Inventory"): stock items of a property (a villa) kept at a
-- location, on a ledger of movements; transfers in transit between locations; category and
-- location trees; stock alerts raised by the alerts jobs.

-- Categories: a tree; items name their category by its code. The platform ships the top level.
CREATE TABLE inventory_categories (
    id          uuid PRIMARY KEY,
    code        text NOT NULL UNIQUE CHECK (code ~ '^[A-Z0-9_]{1,60}$'),
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    parent_id   uuid REFERENCES inventory_categories (id),
    description text CHECK (char_length(description) <= 1000),
    builtin     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX inventory_categories_parent ON inventory_categories (parent_id);

INSERT INTO inventory_categories (id, code, name, description, builtin) VALUES
    ('019a0000-0000-7000-9000-000000000001', 'LINENS', 'Linens', 'Sheets, pillowcases, duvet covers, table linen', true),
    ('019a0000-0000-7000-9000-000000000002', 'TOWELS', 'Towels', 'Bath, hand, pool and beach towels', true),
    ('019a0000-0000-7000-9000-000000000003', 'BEDDING', 'Bedding', 'Pillows, duvets, mattress protectors', true),
    ('019a0000-0000-7000-9000-000000000004', 'KITCHENWARE', 'Kitchenware', 'Pots, pans, utensils, small kitchen tools', true),
    ('019a0000-0000-7000-9000-000000000005', 'TABLEWARE', 'Tableware', 'Plates, glasses, cutlery', true),
    ('019a0000-0000-7000-9000-000000000006', 'CLEANING_SUPPLIES', 'Cleaning supplies', 'Detergents, cloths, mops', true),
    ('019a0000-0000-7000-9000-000000000007', 'TOILETRIES', 'Toiletries', 'Soap, shampoo, toilet paper', true),
    ('019a0000-0000-7000-9000-000000000008', 'GUEST_AMENITIES', 'Guest amenities', 'Welcome packs, slippers, robes', true),
    ('019a0000-0000-7000-9000-000000000009', 'FURNITURE', 'Furniture', 'Indoor and outdoor furniture', true),
    ('019a0000-0000-7000-9000-00000000000a', 'ELECTRONICS', 'Electronics', 'TVs, speakers, routers, remotes', true),
    ('019a0000-0000-7000-9000-00000000000b', 'APPLIANCES', 'Appliances', 'Kitchen and laundry appliances', true),
    ('019a0000-0000-7000-9000-00000000000c', 'POOL_SUPPLIES', 'Pool supplies', 'Chlorine, test kits, pool tools', true),
    ('019a0000-0000-7000-9000-00000000000d', 'GARDEN_SUPPLIES', 'Garden supplies', 'Fertiliser, tools, hoses', true),
    ('019a0000-0000-7000-9000-00000000000e', 'MAINTENANCE_PARTS', 'Maintenance parts', 'Bulbs, filters, fuses, spare parts', true),
    ('019a0000-0000-7000-9000-00000000000f', 'SAFETY_EQUIPMENT', 'Safety equipment', 'Extinguishers, first-aid kits, smoke alarms', true),
    ('019a0000-0000-7000-9000-000000000010', 'OTHER', 'Other', 'Anything else', true);

-- Locations: a tree inside one property (a parent is a location of the same property, which the
-- composite foreign key enforces).
CREATE TABLE inventory_locations (
    id          uuid PRIMARY KEY,
    property_id uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    parent_id   uuid,
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    type        text NOT NULL CHECK (type IN ('BUILDING', 'FLOOR', 'ROOM', 'STORAGE', 'CUPBOARD', 'KITCHEN',
                    'BATHROOM', 'LAUNDRY', 'OUTDOOR', 'POOL_HOUSE', 'WAREHOUSE', 'VEHICLE', 'OTHER')),
    description text CHECK (char_length(description) <= 1000),
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, property_id),
    FOREIGN KEY (parent_id, property_id) REFERENCES inventory_locations (id, property_id) ON DELETE CASCADE
);
CREATE INDEX inventory_locations_property ON inventory_locations (property_id, name);
CREATE INDEX inventory_locations_parent ON inventory_locations (parent_id);

CREATE TABLE inventory_items (
    id          uuid PRIMARY KEY,
    property_id uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    location_id uuid NOT NULL,
    name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    sku         text NOT NULL CHECK (char_length(sku) BETWEEN 1 AND 64),
    category    text NOT NULL REFERENCES inventory_categories (code),
    unit        text NOT NULL CHECK (unit IN ('EACH', 'PAIR', 'SET', 'BOX', 'PACK', 'ROLL', 'BOTTLE', 'LITER', 'KG', 'METER')),
    -- Changed only with a movement, in the same transaction (domain::inventory::movements).
    quantity    numeric(15, 3) NOT NULL DEFAULT 0 CHECK (quantity >= 0),
    min_stock   numeric(15, 3) NOT NULL DEFAULT 0 CHECK (min_stock >= 0),
    max_stock   numeric(15, 3) CHECK (max_stock >= min_stock),
    condition   text CHECK (condition IN ('NEW', 'EXCELLENT', 'GOOD', 'FAIR', 'POOR', 'DAMAGED')),
    unit_cost   numeric(15, 4) CHECK (unit_cost >= 0),
    currency    text NOT NULL DEFAULT 'THB' CHECK (currency ~ '^[A-Z]{3}$'),
    expiry_date date,
    description text CHECK (char_length(description) <= 2000),
    archived_at timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (location_id, property_id) REFERENCES inventory_locations (id, property_id)
);
-- One stock item per sku and location among the items in use (an archived item frees its sku).
CREATE UNIQUE INDEX inventory_items_sku_per_location ON inventory_items (location_id, sku) WHERE archived_at IS NULL;
CREATE INDEX inventory_items_by_name ON inventory_items (name, id) WHERE archived_at IS NULL;
CREATE INDEX inventory_items_property ON inventory_items (property_id, name) WHERE archived_at IS NULL;
CREATE INDEX inventory_items_category ON inventory_items (category) WHERE archived_at IS NULL;

CREATE TABLE inventory_transfers (
    id                      uuid PRIMARY KEY,
    source_location_id      uuid NOT NULL REFERENCES inventory_locations (id),
    destination_location_id uuid NOT NULL REFERENCES inventory_locations (id),
    status                  text NOT NULL DEFAULT 'IN_TRANSIT'
                                CHECK (status IN ('IN_TRANSIT', 'RECEIVED', 'RECEIVED_WITH_DISCREPANCY', 'CANCELLED')),
    notes                   text CHECK (char_length(notes) <= 2000),
    created_by              text NOT NULL,
    created_at              timestamptz NOT NULL DEFAULT now(),
    received_by             text,
    received_at             timestamptz,
    cancelled_by            text,
    cancelled_at            timestamptz,
    CHECK (source_location_id <> destination_location_id)
);
CREATE INDEX inventory_transfers_created ON inventory_transfers (created_at DESC, id DESC);
CREATE INDEX inventory_transfers_source ON inventory_transfers (source_location_id);
CREATE INDEX inventory_transfers_destination ON inventory_transfers (destination_location_id);

CREATE TABLE inventory_transfer_lines (
    transfer_id         uuid NOT NULL REFERENCES inventory_transfers (id) ON DELETE CASCADE,
    line                int NOT NULL,
    item_id             uuid NOT NULL REFERENCES inventory_items (id),
    quantity            numeric(15, 3) NOT NULL CHECK (quantity > 0),
    received_quantity   numeric(15, 3) CHECK (received_quantity >= 0 AND received_quantity <= quantity),
    destination_item_id uuid REFERENCES inventory_items (id),
    notes               text CHECK (char_length(notes) <= 1000),
    PRIMARY KEY (transfer_id, line),
    UNIQUE (transfer_id, item_id)
);

-- The ledger: every change of an item's quantity, with the balance it left.
CREATE TABLE inventory_movements (
    id             uuid PRIMARY KEY,
    item_id        uuid NOT NULL REFERENCES inventory_items (id),
    type           text NOT NULL CHECK (type IN ('INITIAL', 'PURCHASE', 'USE', 'DAMAGE', 'LOSS', 'TRANSFER_IN',
                       'TRANSFER_OUT', 'ADJUSTMENT', 'RETURN')),
    -- The signed change of the item's quantity; the item's quantity is the sum of these.
    change         numeric(15, 3) NOT NULL,
    balance_after  numeric(15, 3) NOT NULL CHECK (balance_after >= 0),
    unit_cost      numeric(15, 4) CHECK (unit_cost >= 0),
    notes          text CHECK (char_length(notes) <= 2000),
    reference_type text CHECK (reference_type IN ('WORK_ORDER', 'TRANSFER', 'PURCHASE_ORDER', 'RESERVATION', 'STOCKTAKE', 'OTHER')),
    reference_id   text CHECK (char_length(reference_id) <= 100),
    transfer_id    uuid REFERENCES inventory_transfers (id),
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK (change <> 0 OR type = 'INITIAL')
);
CREATE INDEX inventory_movements_item ON inventory_movements (item_id, created_at DESC, id DESC);
CREATE INDEX inventory_movements_created ON inventory_movements (created_at DESC, id DESC);

-- Alerts: at most one open (ACTIVE or ACKNOWLEDGED) per item and type, whatever the number of
-- evaluations running.
CREATE TABLE inventory_alerts (
    id                uuid PRIMARY KEY,
    item_id           uuid NOT NULL REFERENCES inventory_items (id),
    type              text NOT NULL CHECK (type IN ('LOW_STOCK', 'CONDITION', 'EXPIRY')),
    status            text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'ACKNOWLEDGED', 'RESOLVED')),
    severity          text NOT NULL CHECK (severity IN ('WARNING', 'CRITICAL')),
    message           text NOT NULL,
    current_quantity  numeric(15, 3) NOT NULL,
    threshold         numeric(15, 3),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    acknowledged_by   text,
    acknowledged_at   timestamptz,
    resolved_by       text,
    resolved_at       timestamptz,
    resolution_action text CHECK (resolution_action IN ('RESTOCKED', 'REORDERED', 'ADJUSTED', 'REPLACED', 'DISPOSED',
                          'DISMISSED', 'OTHER', 'AUTO_RESOLVED')),
    resolution_notes  text CHECK (char_length(resolution_notes) <= 2000)
);
CREATE UNIQUE INDEX inventory_alerts_one_open ON inventory_alerts (item_id, type) WHERE status <> 'RESOLVED';
CREATE INDEX inventory_alerts_created ON inventory_alerts (created_at DESC, id DESC);

-- A location's names from its property down (`Villa Sunset / Main house / Linen cupboard`).
CREATE FUNCTION inventory_location_path(location uuid) RETURNS text LANGUAGE sql STABLE AS $$
    WITH RECURSIVE up (id, parent_id, property_id, name, depth) AS (
        SELECT l.id, l.parent_id, l.property_id, l.name, 0 FROM inventory_locations l WHERE l.id = location
        UNION ALL
        SELECT l.id, l.parent_id, l.property_id, l.name, up.depth + 1
        FROM inventory_locations l JOIN up ON l.id = up.parent_id WHERE up.depth < 50)
    SELECT (SELECT v.villa_name FROM villas v WHERE v.id = (SELECT property_id FROM up LIMIT 1))
           || ' / ' || string_agg(name, ' / ' ORDER BY depth DESC)
    FROM up
$$;

-- A category's names from the top (`Linens / Bed sheets`).
CREATE FUNCTION inventory_category_path(category uuid) RETURNS text LANGUAGE sql STABLE AS $$
    WITH RECURSIVE up (id, parent_id, name, depth) AS (
        SELECT c.id, c.parent_id, c.name, 0 FROM inventory_categories c WHERE c.id = category
        UNION ALL
        SELECT c.id, c.parent_id, c.name, up.depth + 1
        FROM inventory_categories c JOIN up ON c.id = up.parent_id WHERE up.depth < 50)
    SELECT string_agg(name, ' / ' ORDER BY depth DESC) FROM up
$$;

-- The codes of a category and of every category under it.
CREATE FUNCTION inventory_category_codes(root text) RETURNS SETOF text LANGUAGE sql STABLE AS $$
    WITH RECURSIVE down (id, code, depth) AS (
        SELECT c.id, c.code, 0 FROM inventory_categories c WHERE c.code = root
        UNION ALL
        SELECT c.id, c.code, down.depth + 1
        FROM inventory_categories c JOIN down ON c.parent_id = down.id WHERE down.depth < 50)
    SELECT code FROM down
$$;
