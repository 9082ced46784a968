-- The maintenance surface (/maintenance): work orders with their history and comments, assets and
-- their health readings, vendors and their ratings, emergencies with their timeline, planned
-- maintenance templates and schedules, field notes and timesheets. Everything points at the one
-- villa row (villaId) and, for technicians, at the one staff row.

-- A time-ordered (version 7) UUID made in SQL, for rows created by set-based statements (the
-- planned-maintenance generation): 48 bits of Unix milliseconds over a random v4, version bits 0111.
CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE AS $$
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
        PLACING substring(int8send((extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
        FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;

-- Planned-maintenance frequencies: the step between occurrences, and the fewest and most days one
-- step spans (to bound the occurrences a date range can hold).
CREATE FUNCTION pm_interval(frequency text) RETURNS interval LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE frequency
        WHEN 'DAILY' THEN interval '1 day' WHEN 'WEEKLY' THEN interval '7 days'
        WHEN 'BIWEEKLY' THEN interval '14 days' WHEN 'MONTHLY' THEN interval '1 month'
        WHEN 'QUARTERLY' THEN interval '3 months' WHEN 'SEMIANNUAL' THEN interval '6 months'
        ELSE interval '12 months' END
$$;
CREATE FUNCTION pm_min_days(frequency text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE frequency WHEN 'DAILY' THEN 1 WHEN 'WEEKLY' THEN 7 WHEN 'BIWEEKLY' THEN 14
        WHEN 'MONTHLY' THEN 28 WHEN 'QUARTERLY' THEN 89 WHEN 'SEMIANNUAL' THEN 181 ELSE 365 END
$$;
CREATE FUNCTION pm_max_days(frequency text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE frequency WHEN 'DAILY' THEN 1 WHEN 'WEEKLY' THEN 7 WHEN 'BIWEEKLY' THEN 14
        WHEN 'MONTHLY' THEN 31 WHEN 'QUARTERLY' THEN 92 WHEN 'SEMIANNUAL' THEN 184 ELSE 366 END
$$;
-- Occurrence n of a schedule is start + n steps, counted from the start each time, so that
-- monthly occurrences from the 31st fall on the last day of shorter months without drifting.
-- The occurrences after `after` up to `until`, in order.
CREATE FUNCTION pm_occurrences(start date, frequency text, after date, until date)
RETURNS TABLE (occurrence date) LANGUAGE sql IMMUTABLE AS $$
    SELECT o FROM (
        SELECT (start + n * pm_interval(frequency))::date AS o
        FROM generate_series(
            greatest(0, (after - start) / pm_max_days(frequency)),
            greatest(0, (until - start) / pm_min_days(frequency)) + 1) AS n
    ) x
    WHERE o > after AND o <= until
    ORDER BY o
$$;

CREATE TABLE vendors (
    id            uuid PRIMARY KEY,
    company_name  text NOT NULL CHECK (char_length(company_name) BETWEEN 1 AND 255),
    contact_name  text,
    email         text NOT NULL,
    phone         text,
    -- Work-order categories, at least one.
    categories    text[] NOT NULL CHECK (cardinality(categories) >= 1),
    notes         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX vendors_created ON vendors (created_at DESC, id);
CREATE INDEX vendors_categories ON vendors USING gin (categories);

CREATE TABLE assets (
    id                 uuid PRIMARY KEY,
    villa_id           uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    name               text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    category           text NOT NULL,
    brand              text,
    model              text,
    serial_number      text,
    location           text,
    purchase_date      date,
    warranty_end_date  date CHECK (warranty_end_date IS NULL OR purchase_date IS NULL OR warranty_end_date >= purchase_date),
    -- The latest reading (asset_health_readings keeps them all).
    health_score       integer CHECK (health_score BETWEEN 0 AND 100),
    condition          text CHECK (condition IN ('NEW', 'EXCELLENT', 'GOOD', 'FAIR', 'POOR', 'DAMAGED')),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assets_villa ON assets (villa_id, created_at DESC, id);
CREATE INDEX assets_created ON assets (created_at DESC, id);

CREATE TABLE asset_health_readings (
    id            uuid PRIMARY KEY,
    asset_id      uuid NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    health_score  integer NOT NULL CHECK (health_score BETWEEN 0 AND 100),
    condition     text NOT NULL CHECK (condition IN ('NEW', 'EXCELLENT', 'GOOD', 'FAIR', 'POOR', 'DAMAGED')),
    notes         text,
    recorded_by   text NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX asset_health_readings_asset ON asset_health_readings (asset_id, recorded_at DESC, id);

CREATE TABLE pm_templates (
    id                 uuid PRIMARY KEY,
    name               text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 200),
    description        text,
    category           text NOT NULL,
    priority           text NOT NULL CHECK (priority IN ('LOW', 'MEDIUM', 'HIGH', 'URGENT')),
    estimated_hours    numeric(6, 2) CHECK (estimated_hours >= 0),
    checklist          text[] NOT NULL DEFAULT '{}',
    default_frequency  text NOT NULL CHECK (default_frequency IN ('DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY',
                           'QUARTERLY', 'SEMIANNUAL', 'ANNUAL')),
    -- Shipped with the platform (below) rather than added by a user.
    builtin            boolean NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE pm_schedules (
    id           uuid PRIMARY KEY,
    template_id  uuid NOT NULL REFERENCES pm_templates (id),
    asset_id     uuid NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    frequency    text NOT NULL CHECK (frequency IN ('DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'QUARTERLY',
                     'SEMIANNUAL', 'ANNUAL')),
    start_date   date NOT NULL,
    -- SCHEDULED_DATE: each occurrence follows the previous due date; COMPLETED_DATE: it counts from
    -- when the previous work order was completed.
    basis        text NOT NULL DEFAULT 'SCHEDULED_DATE' CHECK (basis IN ('SCHEDULED_DATE', 'COMPLETED_DATE')),
    assignee_id  uuid REFERENCES staff (id) ON DELETE SET NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pm_schedules_created ON pm_schedules (created_at DESC, id);

CREATE TABLE work_orders (
    id                  uuid PRIMARY KEY,
    villa_id            uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    asset_id            uuid REFERENCES assets (id) ON DELETE SET NULL,
    title               text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
    description         text,
    category            text NOT NULL CHECK (category IN ('HVAC', 'ELECTRICAL', 'PLUMBING', 'WATER', 'POOL', 'GARDEN',
                            'APPLIANCE', 'STRUCTURAL', 'PEST_CONTROL', 'CLEANING', 'SECURITY', 'IT_NETWORK',
                            'GENERAL', 'OTHER')),
    priority            text NOT NULL CHECK (priority IN ('LOW', 'MEDIUM', 'HIGH', 'URGENT')),
    status              text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD',
                            'COMPLETED', 'CANCELLED')),
    assignee_type       text CHECK (assignee_type IN ('TECHNICIAN', 'VENDOR')),
    assignee_staff_id   uuid REFERENCES staff (id) ON DELETE SET NULL,
    assignee_vendor_id  uuid REFERENCES vendors (id) ON DELETE SET NULL,
    due_date            timestamptz,
    hold_reason         text,
    completion_notes    text,
    completed_at        timestamptz,
    -- Planned maintenance: the schedule and the occurrence this work order is for.
    schedule_id         uuid REFERENCES pm_schedules (id) ON DELETE SET NULL,
    occurrence_date     date,
    created_by          text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((assignee_type IS NULL) = (assignee_staff_id IS NULL AND assignee_vendor_id IS NULL)),
    CHECK (assignee_staff_id IS NULL OR assignee_vendor_id IS NULL)
);
-- One work order per schedule and occurrence, whatever the number of generation runs.
CREATE UNIQUE INDEX work_orders_one_per_occurrence ON work_orders (schedule_id, occurrence_date)
    WHERE schedule_id IS NOT NULL;
-- The list: newest first, filtered by villa and status.
CREATE INDEX work_orders_villa_status ON work_orders (villa_id, status, created_at DESC, id DESC);
CREATE INDEX work_orders_created ON work_orders (created_at DESC, id DESC);
CREATE INDEX work_orders_status ON work_orders (status, created_at DESC, id DESC);
CREATE INDEX work_orders_asset ON work_orders (asset_id) WHERE asset_id IS NOT NULL;
CREATE INDEX work_orders_staff ON work_orders (assignee_staff_id) WHERE assignee_staff_id IS NOT NULL;
CREATE INDEX work_orders_vendor ON work_orders (assignee_vendor_id) WHERE assignee_vendor_id IS NOT NULL;

CREATE TABLE work_order_history (
    id             uuid PRIMARY KEY,
    work_order_id  uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    from_status    text,
    to_status      text NOT NULL,
    reason         text,
    changed_by     text NOT NULL,
    changed_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_order_history_order ON work_order_history (work_order_id, changed_at, id);

CREATE TABLE work_order_comments (
    id             uuid PRIMARY KEY,
    work_order_id  uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    content        text NOT NULL CHECK (char_length(content) BETWEEN 1 AND 5000),
    type           text NOT NULL CHECK (type IN ('PUBLIC', 'INTERNAL')),
    author         text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_order_comments_order ON work_order_comments (work_order_id, created_at, id);

CREATE TABLE vendor_ratings (
    id             uuid PRIMARY KEY,
    vendor_id      uuid NOT NULL REFERENCES vendors (id) ON DELETE CASCADE,
    work_order_id  uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    quality        smallint NOT NULL CHECK (quality BETWEEN 1 AND 5),
    timeliness     smallint NOT NULL CHECK (timeliness BETWEEN 1 AND 5),
    communication  smallint NOT NULL CHECK (communication BETWEEN 1 AND 5),
    value          smallint NOT NULL CHECK (value BETWEEN 1 AND 5),
    comments       text,
    rated_by       text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- A work order is rated once per vendor.
    UNIQUE (vendor_id, work_order_id)
);

CREATE TABLE emergencies (
    id             uuid PRIMARY KEY,
    villa_id       uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    category       text NOT NULL,
    severity       text NOT NULL CHECK (severity IN ('LOW', 'MEDIUM', 'HIGH', 'CRITICAL')),
    description    text NOT NULL,
    location       text,
    status         text NOT NULL DEFAULT 'REPORTED' CHECK (status IN ('REPORTED', 'ACKNOWLEDGED', 'RESPONDING',
                       'CONTAINED', 'RESOLVED')),
    work_order_id  uuid UNIQUE REFERENCES work_orders (id) ON DELETE SET NULL,
    reported_by    text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX emergencies_created ON emergencies (created_at DESC, id DESC);
CREATE INDEX emergencies_villa ON emergencies (villa_id, created_at DESC);

-- An emergency's timeline: its status changes and the actions taken, in time order.
CREATE TABLE emergency_events (
    id            uuid PRIMARY KEY,
    emergency_id  uuid NOT NULL REFERENCES emergencies (id) ON DELETE CASCADE,
    kind          text NOT NULL CHECK (kind IN ('STATUS_CHANGE', 'ACTION')),
    from_status   text,
    to_status     text,
    notes         text,
    action        text,
    performed_by  uuid REFERENCES staff (id) ON DELETE SET NULL,
    recorded_by   text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX emergency_events_emergency ON emergency_events (emergency_id, created_at, id);

CREATE TABLE field_notes (
    id               uuid PRIMARY KEY,
    villa_id         uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    work_order_id    uuid REFERENCES work_orders (id) ON DELETE CASCADE,
    asset_id         uuid REFERENCES assets (id) ON DELETE CASCADE,
    type             text NOT NULL CHECK (type IN ('TEXT', 'VOICE', 'PHOTO')),
    content          text,
    file_name        text,
    mime_type        text,
    file_size        bigint CHECK (file_size >= 0),
    -- Villas/<villa folder>/Maintenance/Field-Notes/<file>; the bytes stay here until stored.
    storage_path     text UNIQUE,
    pending_content  bytea,
    storage_file_id  text,
    storage_url      text,
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (work_order_id IS NOT NULL OR asset_id IS NOT NULL)
);
CREATE INDEX field_notes_work_order ON field_notes (work_order_id, created_at DESC) WHERE work_order_id IS NOT NULL;
CREATE INDEX field_notes_asset ON field_notes (asset_id, created_at DESC) WHERE asset_id IS NOT NULL;
CREATE INDEX field_notes_created ON field_notes (created_at DESC, id DESC);

CREATE TABLE timesheets (
    id             uuid PRIMARY KEY,
    work_order_id  uuid REFERENCES work_orders (id) ON DELETE SET NULL,
    villa_id       uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    staff_id       uuid REFERENCES staff (id) ON DELETE SET NULL,
    -- Whose day the hours count against: the staff member when given, else the token's subject.
    person         text NOT NULL,
    logged_by      text NOT NULL,
    hours          numeric(4, 2) NOT NULL CHECK (hours > 0 AND hours <= 24 AND hours * 4 = trunc(hours * 4)),
    activity_type  text NOT NULL CHECK (activity_type IN ('REPAIR', 'INSPECTION', 'PREVENTIVE', 'INSTALLATION',
                       'CLEANING', 'TRAVEL', 'OTHER')),
    work_date      date NOT NULL,
    notes          text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX timesheets_work_order ON timesheets (work_order_id) WHERE work_order_id IS NOT NULL;
CREATE INDEX timesheets_staff ON timesheets (staff_id, work_date) WHERE staff_id IS NOT NULL;
CREATE INDEX timesheets_date ON timesheets (work_date DESC, created_at DESC, id DESC);

-- The hours each person logged per day; the CHECK holds the daily cap under any concurrency
-- (each entry adds to its row in the same transaction).
CREATE TABLE timesheet_days (
    person     text NOT NULL,
    work_date  date NOT NULL,
    hours      numeric(5, 2) NOT NULL CHECK (hours >= 0 AND hours <= 24),
    PRIMARY KEY (person, work_date)
);

-- The starting set of planned-maintenance templates for villas.
INSERT INTO pm_templates (id, name, description, category, priority, estimated_hours, checklist, default_frequency, builtin) VALUES
    ('019a0000-0000-7000-8000-000000000001', 'Pool pump service', 'Inspect and service the pool circulation pump and filter.',
     'POOL', 'MEDIUM', 1.5, ARRAY['Check pump pressure and noise', 'Clean strainer basket', 'Backwash filter', 'Inspect seals and hoses for leaks', 'Check timer settings'], 'MONTHLY', true),
    ('019a0000-0000-7000-8000-000000000002', 'AC filter cleaning', 'Clean the air-conditioning units'' filters and check drainage.',
     'HVAC', 'MEDIUM', 1, ARRAY['Remove and wash filters', 'Check condensate drain', 'Check remote and thermostat', 'Note unusual noise or smell'], 'MONTHLY', true),
    ('019a0000-0000-7000-8000-000000000003', 'Generator test', 'Run the standby generator under load.',
     'ELECTRICAL', 'HIGH', 1, ARRAY['Check fuel and oil levels', 'Run under load for 30 minutes', 'Check battery and charger', 'Log run hours'], 'MONTHLY', true),
    ('019a0000-0000-7000-8000-000000000004', 'Water tank cleaning', 'Drain, clean and disinfect the water storage tanks.',
     'WATER', 'HIGH', 4, ARRAY['Drain tank', 'Scrub walls and floor', 'Disinfect', 'Check float valve', 'Refill and test water'], 'SEMIANNUAL', true),
    ('019a0000-0000-7000-8000-000000000005', 'Pest control treatment', 'Preventive treatment against termites, ants and mosquitoes.',
     'PEST_CONTROL', 'MEDIUM', 2, ARRAY['Inspect for termite activity', 'Treat perimeter', 'Treat drains and standing water', 'Record products used'], 'QUARTERLY', true),
    ('019a0000-0000-7000-8000-000000000006', 'Fire extinguisher check', 'Check every extinguisher and the smoke detectors.',
     'SECURITY', 'HIGH', 0.5, ARRAY['Check pressure gauge', 'Check seal and pin', 'Check expiry date', 'Test smoke detectors'], 'QUARTERLY', true),
    ('019a0000-0000-7000-8000-000000000007', 'Water heater service', 'Flush the water heaters and check their safety valves.',
     'PLUMBING', 'MEDIUM', 1.5, ARRAY['Flush sediment', 'Test pressure relief valve', 'Check anode rod', 'Check thermostat'], 'SEMIANNUAL', true),
    ('019a0000-0000-7000-8000-000000000008', 'Garden irrigation check', 'Check the irrigation system and its timers.',
     'GARDEN', 'LOW', 1, ARRAY['Run every zone', 'Clear blocked sprinklers', 'Check for leaks', 'Adjust timers to season'], 'MONTHLY', true),
    ('019a0000-0000-7000-8000-000000000009', 'Roof and gutter inspection', 'Inspect the roof, gutters and downpipes before the rains.',
     'STRUCTURAL', 'MEDIUM', 2, ARRAY['Clear gutters and downpipes', 'Check roof tiles', 'Check flashing and seals', 'Check ceilings for stains'], 'SEMIANNUAL', true),
    ('019a0000-0000-7000-8000-00000000000a', 'Electrical safety inspection', 'Check the distribution board, RCDs and outdoor sockets.',
     'ELECTRICAL', 'HIGH', 2, ARRAY['Test RCDs', 'Check board for heat marks', 'Check outdoor sockets and covers', 'Check earthing'], 'ANNUAL', true),
    ('019a0000-0000-7000-8000-00000000000b', 'Water filter replacement', 'Replace the drinking-water filter cartridges.',
     'WATER', 'MEDIUM', 0.5, ARRAY['Replace sediment cartridge', 'Replace carbon cartridge', 'Flush system', 'Record date on housing'], 'QUARTERLY', true),
    ('019a0000-0000-7000-8000-00000000000c', 'Wi-Fi and router check', 'Check the guest network, router and access points.',
     'IT_NETWORK', 'LOW', 0.5, ARRAY['Speed test in each room', 'Restart router', 'Check firmware', 'Check guest password card'], 'MONTHLY', true);
